import type { FetchLike } from '@modelcontextprotocol/client';
import { clientSdk } from '../client-sdk.ts';
import type { OAuthStatus } from '../../../contract/oauth-status.ts';
import type { Vault } from '../../../core/ports/ports.ts';
import { GatehouseError } from '../../../core/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { TimerHandle, Timers } from '../../../lib/clock.ts';
import { clientAccount, readItem, StoredClient, StoredTokens, tokensAccount } from './oauth-vault.ts';
import { scrubOAuth } from './oauth-errors.ts';
import type { VaultOAuthProvider, OAuthTarget } from './vault-provider.ts';
import { keyOf, metadataUrlOpt, type Binding, type Target } from './oauth-target-state.ts';

/** refresh this long before expiry (or at 80% of a shorter lifetime) */
const EARLY_MS = 60_000;
/** token values of one key kept as known (a few refreshes' worth) */
const MAX_KNOWN_TOKENS = 8;

export interface TokenKeeperDeps {
  vault: Vault;
  log: Logger;
  fetch?: FetchLike;
  /** the timers of the proactive refreshes */
  timers: Timers;
  /** a provider that refreshes this upstream's tokens */
  provider(target: OAuthTarget): VaultOAuthProvider;
  /** every upstream on the key needs a sign-in: marks them and answers the error to show */
  require(key: string, reason: string): GatehouseError;
  /** a key's proactive refresh is due; `refreshable` when its tokens came with a refresh token */
  due(key: string, refreshable: boolean): void;
  /** sign-in state changed */
  changed(): void;
}

/**
 * The tokens of every issuer + resource this run knows: cached from the vault, refreshed single-flight (two
 * connections never spend the same rotating refresh token twice) and ahead of their expiry, and every value they
 * ever had, for masking.
 */
export class TokenKeeper {
  private readonly tokens = new Map<string, StoredTokens>();
  private readonly refreshing = new Map<string, Promise<void>>();
  /**
   * Every token value of a key this run has held, newest last, bounded: what the upstreams' answers are masked of
   * (connection.ts). A token refreshed away may still be valid until it expires, so it stays among them.
   */
  private readonly seenTokens = new Map<string, string[]>();
  private readonly timers = new Map<string, TimerHandle>();
  private readonly registrations = new Map<string, OAuthStatus['registration']>();

  constructor(private readonly deps: TokenKeeperDeps) {}

  cached(key: string): StoredTokens | undefined {
    return this.tokens.get(key);
  }

  known(key: string): string[] {
    return this.seenTokens.get(key) ?? [];
  }

  /** How the client of this issuer was registered, once its registration was read. */
  registration(issuer: string): OAuthStatus['registration'] | null {
    return this.registrations.get(issuer) ?? null;
  }

  /** Remembers a key's tokens as known values, from the moment they are stored or read. */
  remember(key: string, t: StoredTokens): void {
    const known = this.known(key).filter((v) => v !== t.access_token && v !== t.refresh_token);
    known.push(t.access_token, ...(t.refresh_token ? [t.refresh_token] : []));
    this.seenTokens.set(key, known.slice(-MAX_KNOWN_TOKENS));
  }

  /** The key's tokens (cached); `fresh` reads the vault again, replacing the cached copy only once read (never a moment without). */
  async load(b: Binding, fresh = false): Promise<StoredTokens | undefined> {
    const key = keyOf(b);
    const cached = this.tokens.get(key);
    if (cached && !fresh) return cached;
    const t = await this.stored(b);
    if (t) {
      this.remember(key, t);
      this.tokens.set(key, t);
      this.schedule(key, t);
    } else if (fresh) this.tokens.delete(key);
    const client = await readItem(this.deps.vault, clientAccount(b.issuer), StoredClient);
    if (client) this.registrations.set(b.issuer, client.registration);
    return t;
  }

  /** The key's tokens as the vault holds them now, not cached. */
  stored(b: Binding): Promise<StoredTokens | undefined> {
    return readItem(this.deps.vault, tokensAccount(b.issuer, b.resource), StoredTokens);
  }

  /** One refresh per issuer + resource at a time, whoever asks. */
  refresh(t: Target): Promise<void> {
    const key = keyOf(t.binding!);
    const running = this.refreshing.get(key);
    if (running) return running;
    const run = this.doRefresh(t, key).finally(() => this.refreshing.delete(key));
    this.refreshing.set(key, run);
    return run;
  }

  /** Nothing refreshes the key any more: its timer is cleared and a refresh under way is waited for. */
  async settle(key: string): Promise<void> {
    this.deps.timers.clear(this.timers.get(key));
    this.timers.delete(key);
    await this.refreshing.get(key)?.catch(() => undefined);
  }

  /** Deletes the key's tokens from the vault, then from the cache. */
  async erase(b: Binding): Promise<void> {
    await this.deps.vault.delete(tokensAccount(b.issuer, b.resource));
    this.tokens.delete(keyOf(b));
  }

  close(): void {
    for (const timer of this.timers.values()) this.deps.timers.clear(timer);
    this.timers.clear();
  }

  private async doRefresh(t: Target, key: string): Promise<void> {
    const provider = this.deps.provider(t.target);
    const { auth } = await clientSdk();
    try {
      await auth(provider, {
        serverUrl: t.target.url,
        ...metadataUrlOpt(t),
        ...(this.deps.fetch ? { fetchFn: this.deps.fetch } : {}),
      });
    } catch (e) {
      throw this.refreshFailed(t, key, provider, e);
    }
    const b = provider.key()!;
    if (keyOf(b) !== key) return void this.deps.require(key, 'its authorization server changed');
    await this.load(b, true);
    this.deps.changed();
  }

  private refreshFailed(t: Target, key: string, provider: VaultOAuthProvider, e: unknown): GatehouseError {
    if (e instanceof GatehouseError && e.code === 'sign_in_required') {
      this.tokens.delete(key);
      // A resource now naming another authorization server has no tokens under the new key: a sign-in, not a refused refresh.
      const now = provider.key();
      return this.deps.require(
        key,
        now && keyOf(now) !== key
          ? 'its authorization server changed'
          : 'the authorization server refused the refresh (sign in again)',
      );
    }
    this.deps.log.warn('oauth: refreshing the token failed; trying again later', {
      upstream: t.target.id,
      error: scrubOAuth(e),
    });
    return new GatehouseError(
      'upstream_unavailable',
      `upstream '${t.target.id}': refreshing its sign-in failed (${scrubOAuth(e)}); Gatehouse tries again`,
    );
  }

  private schedule(key: string, t: StoredTokens): void {
    this.deps.timers.clear(this.timers.get(key));
    if (t.expires_at === undefined) return;
    const left = t.expires_at - Date.now();
    const wait = Math.max(1_000, left - Math.min(EARLY_MS, left * 0.2));
    const timer = this.deps.timers.set(
      () => {
        this.timers.delete(key);
        this.deps.due(key, !!t.refresh_token);
      },
      Math.min(wait, 2 ** 31 - 1),
    );
    timer.unref?.();
    this.timers.set(key, timer);
  }
}
