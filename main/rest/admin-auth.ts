import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Clock, Vault } from '../core/ports.ts';
import type { Tokens } from '../core/tokens.ts';
import { capabilitiesOf } from '../core/users.ts';
import { randomBase64Url } from '../core/ids.ts';
import { parseCookies } from '../lib/http/cookies.ts';

export const ADMIN_KEY_ACCOUNT = 'admin-api-key';
export const SESSION_COOKIE = 'gatehouse_session';
const LOGIN_LINK_TTL_MS = 10 * 60_000;
const SESSION_TTL_MS = 12 * 3600_000;

const sha = (s: string) => createHash('sha256').update(s).digest();
const sameSecret = (a: string, b: string) => timingSafeEqual(sha(a), sha(b));

/** Who is calling the admin API. */
export type AdminPrincipal = { kind: 'session'; login: string } | { kind: 'admin-key'; login: string } | { kind: 'token'; login: string };

/**
 * Admin API credentials: the service's admin key (kept in the vault, read by
 * the CLI of the same OS user), console sessions started from a one-time
 * login link, and tokens whose user has manage_options.
 */
export class AdminAuth {
  private readonly links = new Map<string, number>();
  private readonly sessions = new Map<string, number>();

  private constructor(private readonly adminKey: string, private readonly tokens: Tokens, private readonly clock: Clock) {}

  /** Loads the admin key from the vault, creating it on first run. */
  static async open(vault: Vault, tokens: Tokens, clock: Clock): Promise<AdminAuth> {
    let key = await vault.get(ADMIN_KEY_ACCOUNT);
    if (!key) {
      key = `gha_${randomBase64Url(32)}`;
      await vault.set(ADMIN_KEY_ACCOUNT, key);
    }
    return new AdminAuth(key, tokens, clock);
  }

  /** A code for the one-time console login link. */
  issueLoginCode(): string {
    const code = randomBase64Url(24);
    this.links.set(code, this.clock.now() + LOGIN_LINK_TTL_MS);
    return code;
  }

  /** Spends a login code (once) and returns a new session id. */
  redeem(code: string): string | null {
    const expires = this.links.get(code);
    this.links.delete(code);
    if (!expires || expires < this.clock.now()) return null;
    const sid = randomBase64Url(32);
    this.sessions.set(sid, this.clock.now() + SESSION_TTL_MS);
    return sid;
  }

  endSession(req: IncomingMessage): void {
    const sid = parseCookies(req.headers.cookie)[SESSION_COOKIE];
    if (sid) this.sessions.delete(sid);
  }

  principal(req: IncomingMessage): AdminPrincipal | null {
    const sid = parseCookies(req.headers.cookie)[SESSION_COOKIE];
    if (sid) {
      const exp = this.sessions.get(sid);
      if (exp && exp > this.clock.now()) return { kind: 'session', login: 'console' };
    }
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m) return null;
    if (sameSecret(m[1]!, this.adminKey)) return { kind: 'admin-key', login: 'admin' };
    const v = this.tokens.verify(m[1]!);
    if (v && capabilitiesOf(v.user.role).has('manage_options')) return { kind: 'token', login: v.user.login };
    return null;
  }
}
