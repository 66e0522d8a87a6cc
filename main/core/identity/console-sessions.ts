import { createHash } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import { randomBase64Url } from '../../lib/ids.ts';

export const LOGIN_LINK_TTL_MS = 10 * 60_000;
export const SESSION_TTL_MS = 12 * 3600_000;
/** Unspent login links kept at once; issuing one more drops the oldest. */
export const MAX_LOGIN_LINKS = 20;
/** Console sessions kept at once; a new login past this ends the oldest. */
export const MAX_SESSIONS = 50;

const digest = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');
/** What a session is called in the audit and `decided_by`: derived from its hash, useless as a credential. */
const publicId = (hash: string): string => `ses_${hash.slice(0, 12)}`;

/**
 * One-time console login codes and the sessions they start, in memory only
 * (a restart logs everyone out). Both maps are keyed by the secret's sha256,
 * so neither a lookup's timing nor a heap dump gives a usable secret; expired
 * entries are pruned on every change, and each map has a hard bound.
 */
export class ConsoleSessions {
  private readonly links = new Map<string, number>();
  private readonly sessions = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /** A code for a one-time login link, valid for LOGIN_LINK_TTL_MS. */
  issueLoginCode(): string {
    const code = randomBase64Url(24);
    put(this.links, digest(code), this.clock.now() + LOGIN_LINK_TTL_MS, MAX_LOGIN_LINKS, this.clock.now());
    return code;
  }

  /** Spends a login code (once); a new session id and its public id, or null when used up or expired. */
  redeem(code: string): { sid: string; public_id: string } | null {
    if (typeof code !== 'string' || code.length === 0 || code.length > 200) return null;
    const key = digest(code);
    const expires = this.links.get(key);
    this.links.delete(key);
    const now = this.clock.now();
    if (!expires || expires <= now) return null;
    const sid = randomBase64Url(32);
    const hash = digest(sid);
    put(this.sessions, hash, now + SESSION_TTL_MS, MAX_SESSIONS, now);
    return { sid, public_id: publicId(hash) };
  }

  /** The public id of a live session, or null. */
  check(sid: string | undefined): string | null {
    if (!sid || sid.length > 200) return null;
    const hash = digest(sid);
    const expires = this.sessions.get(hash);
    if (!expires) return null;
    if (expires <= this.clock.now()) {
      this.sessions.delete(hash);
      return null;
    }
    return publicId(hash);
  }

  /** Ends the session with this public id (the caller's own, from its principal). */
  end(public_id: string): boolean {
    for (const hash of this.sessions.keys()) {
      if (publicId(hash) === public_id) return this.sessions.delete(hash);
    }
    return false;
  }

  /** How many links and sessions are held (for tests and the health view). */
  size(): { links: number; sessions: number } {
    const now = this.clock.now();
    prune(this.links, now);
    prune(this.sessions, now);
    return { links: this.links.size, sessions: this.sessions.size };
  }
}

function prune(map: Map<string, number>, now: number): void {
  for (const [k, expires] of map) if (expires <= now) map.delete(k);
}

/** Insert after pruning; past the bound the oldest entry (first in insertion order) goes. */
function put(map: Map<string, number>, key: string, expires: number, max: number, now: number): void {
  prune(map, now);
  while (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, expires);
}
