import { createHash, timingSafeEqual } from 'node:crypto';
import {
  TOKEN_PATTERN,
  TOKEN_PREFIX,
  type TokenRecord,
  type TokenScope,
  type TokenView,
} from '../../contract/tokens.ts';
import type { User } from '../../contract/users.ts';
import type { DocumentStore } from '../ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { OptionsData } from '../ports/options-data.ts';
import { GatehouseError } from '../errors.ts';
import { randomBase64Url, shortId } from '../../lib/ids.ts';

/** `last_used` is written at most once a minute per token. */
export const LAST_USED_THROTTLE_MS = 60_000;

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
export const previewOf = (token: string): string => `${TOKEN_PREFIX}…${token.slice(-4)}`;
export const generateToken = (): string => TOKEN_PREFIX + randomBase64Url(32);

export interface Verified {
  record: TokenRecord;
  user: User;
}

export class Tokens {
  private index: { source: readonly TokenRecord[]; byHash: Map<string, TokenRecord> } | null = null;
  /** in-memory throttle, so a burst of requests queues one write, not one each */
  private readonly touched = new Map<string, number>();
  private readonly clients = new Map<string, string>();
  private readonly revokeListeners = new Set<(id: string) => void>();

  constructor(
    private readonly store: DocumentStore<OptionsData>,
    private readonly clock: Clock,
  ) {}

  list(): TokenView[] {
    const { tokens, users } = this.store.read();
    return tokens.map(({ hash: _hash, ...rest }) => ({
      ...rest,
      user_login: users.find((u) => u.id === rest.user_id)?.login,
    }));
  }

  /** Returns the clear token once; only its hash is stored. */
  async create(
    label: string,
    user: User,
    scope: Partial<TokenScope> = {},
  ): Promise<{ token: string; record: TokenView }> {
    const clean = label.trim();
    if (!clean)
      throw new GatehouseError('invalid_value', 'a token needs a label (e.g. the client it is for: "Claude Desktop")');
    if (clean.length > 100) throw new GatehouseError('invalid_value', 'a token label is at most 100 characters');
    const token = generateToken();
    const record: TokenRecord = {
      id: shortId('tok'),
      label: clean,
      hash: hashToken(token),
      user_id: user.id,
      preview: previewOf(token),
      created: new Date(this.clock.now()).toISOString(),
      last_used: null,
      scope: {
        read_only: scope.read_only ?? false,
        ...(scope.tools ? { tools: scope.tools } : {}),
        ...(scope.plugins ? { plugins: scope.plugins } : {}),
        ...(scope.profile ? { profile: scope.profile } : {}),
      },
    };
    await this.store.update((d) => {
      // Checked in the same write that binds it, so a profile removed meanwhile cannot leave a token bound to nothing.
      if (scope.profile !== undefined && !d.profiles.some((p) => p.name === scope.profile)) {
        throw new GatehouseError('not_found', `no profile '${scope.profile}' (see: gatehouse profiles list)`);
      }
      d.tokens.push(record);
    });
    const { hash: _hash, ...view } = record;
    return { token, record: { ...view, user_login: user.login } };
  }

  /** Revoke = delete: the next request with it gets 401, and what it holds open ends (see onRevoke). */
  async revoke(id: string): Promise<void> {
    await this.store.update((d) => {
      const i = d.tokens.findIndex((t) => t.id === id);
      if (i < 0) throw new GatehouseError('not_found', `no token with id '${id}' (see: gatehouse tokens list)`);
      d.tokens.splice(i, 1);
    });
    for (const l of this.revokeListeners) l(id);
  }

  /** Called after each revocation: channels a token opened before (notification streams) must end now. Returns the unsubscribe. */
  onRevoke(listener: (id: string) => void): () => void {
    this.revokeListeners.add(listener);
    return () => this.revokeListeners.delete(listener);
  }

  /**
   * Finds the record for a presented token. The lookup is by sha256, so the
   * time it takes says nothing about the secret; the final comparison is
   * constant-time as well.
   */
  verify(presented: string): Verified | null {
    if (!TOKEN_PATTERN.test(presented)) return null;
    const hash = hashToken(presented);
    const record = this.byHash().get(hash);
    if (!record || !timingSafeEqual(Buffer.from(record.hash, 'hex'), Buffer.from(hash, 'hex'))) return null;
    const user = this.store.read().users.find((u) => u.id === record.user_id);
    return user ? { record, user } : null;
  }

  /** The token record of this id and its user, for a channel that outlives the request that authenticated it; null once revoked. */
  byId(id: string): Verified | null {
    const { tokens, users } = this.store.read();
    const record = tokens.find((t) => t.id === id);
    const user = record && users.find((u) => u.id === record.user_id);
    return record && user ? { record, user } : null;
  }

  /** The client name last seen with this token (in memory; for "clients seen recently"). */
  lastClient(id: string): string | null {
    return this.clients.get(id) ?? null;
  }

  /** Throttled: at most one write a minute per token. */
  touch(record: TokenRecord, client?: string | null): void {
    if (client) this.clients.set(record.id, client);
    const now = this.clock.now();
    const last = Math.max(this.touched.get(record.id) ?? 0, record.last_used ? Date.parse(record.last_used) : 0);
    if (now - last < LAST_USED_THROTTLE_MS) return;
    this.touched.set(record.id, now);
    const stamp = new Date(now).toISOString();
    void this.store
      .update((d) => {
        const t = d.tokens.find((x) => x.id === record.id);
        if (t && (!t.last_used || now - Date.parse(t.last_used) >= LAST_USED_THROTTLE_MS)) t.last_used = stamp;
      })
      .catch(() => undefined);
  }

  private byHash(): Map<string, TokenRecord> {
    const tokens = this.store.read().tokens;
    if (this.index?.source !== tokens) this.index = { source: tokens, byHash: new Map(tokens.map((t) => [t.hash, t])) };
    return this.index.byHash;
  }
}
