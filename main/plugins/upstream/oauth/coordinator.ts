import type { AuthProvider, FetchLike } from '@modelcontextprotocol/client';
import { clientSdk } from '../client-sdk.ts';
import type { OAuthRevocation, OAuthStatus } from '../../../contract/oauth-status.ts';
import type { Vault } from '../../../core/ports/ports.ts';
import { GatehouseError } from '../../../core/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import { systemTimers, type Timers } from '../../../lib/clock.ts';
import { clientAccount, readItem, StoredClient } from './oauth-vault.ts';
import { scrubOAuth, sdkFailure, type UpstreamAuth } from './oauth-errors.ts';
import { revokeTokens, type RevokeInput } from './revoke.ts';
import { challengeOf, probeChallenge } from './challenge.ts';
import { preregisteredClient, signInRequired, type OAuthTarget } from './vault-provider.ts';
import { TokenKeeper } from './token-keeper.ts';
import { SignInFlows } from './sign-in-flows.ts';
import {
  computeScopeUnion,
  keyOf,
  metadataUrlOf,
  SIGNED_OUT,
  type Binding,
  type Target,
} from './oauth-target-state.ts';

export type { Binding } from './oauth-target-state.ts';

/**
 * The one place in the service that signs upstreams in (docs/oauth.md). Keyed
 * by issuer + resource: every upstream bound to the same key shares one
 * sign-in, one token set and one refresh (single-flight, so two connections
 * never spend the same rotating refresh token twice). A refresh that fails
 * (`invalid_grant`, or no refresh token at all) becomes one "sign in again"
 * item on each upstream concerned and nothing else: no browser is ever
 * opened except when a person asks to sign in.
 *
 * This keeps the upstreams and what they are bound to; their tokens are kept by
 * token-keeper.ts and their sign-ins run in sign-in-flows.ts.
 */

export interface CoordinatorDeps {
  vault: Vault;
  log: Logger;
  /** a sign-in finished (or ended) for these upstreams: connect them again */
  reconnect(ids: string[]): void;
  /** sign-in state changed: the console reloads */
  changed(): void;
  /** remember which issuer and resource an upstream signed in with (upstreams.json; not a secret) */
  bind(id: string, binding: Binding): Promise<void>;
  callbackPorts?: readonly number[];
  fetch?: FetchLike;
  /** how long a started sign-in waits for its browser step (default 10 minutes) */
  flowTtlMs?: number;
  /** the timers of the proactive refreshes (default real ones; tests fire them instead of waiting out a lifetime) */
  refreshTimers?: Timers;
  /** the Client ID Metadata Document URL for upstreams that name none (the connected cloud gateway's), asked at each sign-in */
  defaultClientMetadataUrl?(): string | null;
}

export class OAuthCoordinator {
  private readonly targets = new Map<string, Target>();
  private readonly waiters = new Set<() => void>();
  private starting: Promise<unknown> = Promise.resolve();
  /** the bearer each 401 answered (null: none was sent), keyed by the response the transport hands back to onUnauthorized */
  private readonly answered = new WeakMap<Response, string | null>();
  private readonly tokens: TokenKeeper;
  private readonly flows: SignInFlows;

  constructor(private readonly deps: CoordinatorDeps) {
    this.flows = new SignInFlows({
      vault: deps.vault,
      log: deps.log,
      ...(deps.callbackPorts ? { callbackPorts: deps.callbackPorts } : {}),
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      ...(deps.flowTtlMs !== undefined ? { flowTtlMs: deps.flowTtlMs } : {}),
      defaultClientMetadataUrl: () => deps.defaultClientMetadataUrl?.() ?? null,
      remember: (key, t) => this.tokens.remember(key, t),
      target: (id) => this.target(id),
      find: (id) => this.targets.get(id),
      signedIn: (ids, binding) => this.signedIn(ids, binding),
      notify: () => this.notify(),
    });
    this.tokens = new TokenKeeper({
      vault: deps.vault,
      log: deps.log,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      timers: deps.refreshTimers ?? systemTimers,
      provider: (target) => this.flows.provider(target, { kind: 'refresh' }),
      require: (key, reason) => this.require(key, reason),
      due: (key, refreshable) => this.due(key, refreshable),
      changed: () => deps.changed(),
    });
  }

  /** An OAuth upstream (at load and at add); `binding` is what it last signed in with. */
  async register(target: OAuthTarget, binding: Binding | null): Promise<void> {
    this.targets.set(target.id, { target, binding, need: null, challenge: null });
    if (binding)
      await this.tokens.load(binding).catch((e: unknown) =>
        this.deps.log.warn('oauth: could not read the sign-in from the vault', {
          upstream: target.id,
          error: scrubOAuth(e),
        }),
      );
  }

  forget(id: string): void {
    this.targets.delete(id);
    this.flows.forget(id);
  }

  /** What the upstream's connection hands its transport: the token, and what a 401 does. */
  authFor(id: string): UpstreamAuth {
    const provider: AuthProvider = {
      token: () => this.token(id),
      onUnauthorized: (ctx) => this.unauthorized(id, ctx.response),
    };
    return {
      provider,
      explain: (e) => sdkFailure(e, id, (scope) => this.stepUp(id, scope)),
      needs: () => {
        const need = this.targets.get(id)?.need;
        return need ? (need.signedOut ? 'signed_out' : 'sign_in_required') : null;
      },
      known: () => {
        const b = this.targets.get(id)?.binding;
        return b ? this.tokens.known(keyOf(b)) : [];
      },
      fetch: (base) => async (input, init) => {
        const res = await base(input, init);
        const sent = res.status === 401 ? bearerOf(init?.headers) : undefined;
        // a 401 whose request's headers cannot be read is not tagged: it is taken as a refusal, as before
        if (sent !== undefined) this.answered.set(res, sent);
        return res;
      },
    };
  }

  status(id: string): OAuthStatus {
    const t = this.target(id);
    const tokens = t.binding ? this.tokens.cached(keyOf(t.binding)) : undefined;
    const flow = this.flows.of(id);
    const state = flow
      ? 'signing_in'
      : t.need?.signedOut
        ? 'signed_out'
        : t.need
          ? 'sign_in_required'
          : tokens
            ? 'signed_in'
            : 'signed_out';
    return {
      id,
      state,
      reason: flow?.error ?? t.need?.reason ?? null,
      issuer: t.binding?.issuer ?? null,
      resource: t.binding?.resource ?? null,
      scopes:
        (state === 'signed_in' ? tokens?.scope : computeScopeUnion(t.target.scopes ?? undefined, t.need?.scopes)) ??
        null,
      expires_at: tokens?.expires_at ? new Date(tokens.expires_at).toISOString() : null,
      refreshable: !!tokens?.refresh_token,
      registration: t.target.client_id ? 'preregistered' : this.tokens.registration(t.binding?.issuer ?? ''),
      authorization_url: flow?.url ?? null,
    };
  }

  /**
   * Starts a sign-in (or joins the one under way for the same issuer and
   * resource) and answers with its authorization URL. Nothing opens a browser
   * here: the CLI or the console does, for the person who asked.
   */
  async login(id: string): Promise<OAuthStatus> {
    const t = this.target(id);
    // The server's own 401 first: the metadata URL and scope it names are where and what the sign-in asks (challenge.ts).
    t.challenge = (await probeChallenge(t.target.url, this.deps.fetch).catch(() => null)) ?? t.challenge;
    // Two upstreams of one issuer and resource share one sign-in: an upstream never signed in finds out which it is first.
    const key = t.binding ?? (await this.discoverBinding(t).catch(() => null));
    // Checked once the sign-ins started before this one are registered, so two never write the same flow item.
    const run = this.starting.then(() => (this.flows.join(id, key) ? undefined : this.flows.start(t)));
    this.starting = run.catch(() => undefined);
    await run;
    return this.status(id);
  }

  /** Resolves when the upstream is signed in or its sign-in failed or expired (or after `ms`). */
  async wait(id: string, ms: number): Promise<OAuthStatus> {
    const end = Date.now() + ms;
    while (this.status(id).state === 'signing_in' && Date.now() < end) {
      await new Promise<void>((r) => {
        const done = () => (this.waiters.delete(done), clearTimeout(timer), r());
        const timer = setTimeout(done, Math.min(1000, Math.max(0, end - Date.now())));
        this.waiters.add(done);
      });
    }
    return this.status(id);
  }

  /**
   * Signs out every upstream bound to the same issuer and resource: first
   * nothing may use or refresh the tokens (a refresh under way is waited
   * for), then the authorization server is asked to revoke them when it
   * offers revocation (revoke.ts), then they are deleted from the vault
   * whatever it answered. A kill before the delete leaves them stored, and
   * signing out again finishes it. The registration stays.
   */
  async logout(id: string): Promise<OAuthStatus> {
    const t = this.target(id);
    const revocation = t.binding
      ? await this.signOut(t, t.binding)
      : { outcome: 'not_signed_in' as const, warning: null };
    t.need = SIGNED_OUT;
    this.notify();
    return { ...this.status(id), revocation };
  }

  async close(): Promise<void> {
    this.tokens.close();
    await this.flows.close();
  }

  private async signOut(t: Target, b: Binding): Promise<OAuthRevocation> {
    const key = keyOf(b);
    const ids = this.boundTo(key);
    for (const other of ids) this.target(other).need = SIGNED_OUT;
    await this.tokens.settle(key);
    const revocation = await this.revoke(t, b);
    if (revocation.warning)
      this.deps.log.warn('oauth: sign-out could not revoke at the authorization server', {
        upstreams: ids,
        warning: revocation.warning,
      });
    await this.tokens.erase(b);
    this.deps.reconnect(ids);
    return revocation;
  }

  private async revoke(t: Target, b: Binding): Promise<OAuthRevocation> {
    const tokens = await this.tokens.stored(b);
    if (!tokens) return { outcome: 'not_signed_in', warning: null };
    return revokeTokens({
      tokens,
      client: await this.clientFor(t.target, b.issuer),
      ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}),
    });
  }

  /** The registration tokens of this issuer were issued to: the client id a person entered, or the stored one. */
  private async clientFor(target: OAuthTarget, issuer: string): Promise<RevokeInput['client']> {
    if (target.client_id) return preregisteredClient(this.deps.vault, target).catch(() => null);
    const stored = await readItem(this.deps.vault, clientAccount(issuer), StoredClient);
    if (!stored) return null;
    const method =
      typeof stored.token_endpoint_auth_method === 'string' ? stored.token_endpoint_auth_method : undefined;
    return {
      client_id: stored.client_id,
      ...(stored.client_secret ? { client_secret: stored.client_secret } : {}),
      ...(method ? { token_endpoint_auth_method: method } : {}),
    };
  }

  private target(id: string): Target {
    const t = this.targets.get(id);
    if (!t)
      throw new GatehouseError(
        'invalid_value',
        `upstream '${id.slice(0, 40)}' does not sign in with OAuth (add it with --oauth)`,
      );
    return t;
  }

  private boundTo(key: string): string[] {
    return [...this.targets.entries()].filter(([, t]) => t.binding && keyOf(t.binding) === key).map(([id]) => id);
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
    this.deps.changed();
  }

  private async token(id: string): Promise<string | undefined> {
    const t = this.targets.get(id);
    if (!t?.binding || t.need) return undefined;
    let tokens = await this.tokens.load(t.binding);
    if (tokens?.expires_at !== undefined && tokens.expires_at - Date.now() < 5_000) {
      // Never assume a refresh token: without one, an expired token is a sign-in to do, asked for once.
      if (!tokens.refresh_token)
        return void this.require(keyOf(t.binding), 'the access token expired and the server gave no refresh token');
      await this.refresh(id).catch(() => undefined);
      tokens = this.tokens.cached(keyOf(t.binding));
    }
    return tokens?.access_token;
  }

  /** A 401: an upstream not bound yet may find a sign-in another upstream made; else refresh once; else sign in. */
  private async unauthorized(id: string, response: Response): Promise<void> {
    const t = this.target(id);
    const said = await challengeOf(response);
    if (said.resourceMetadataUrl || said.scope) t.challenge = said;
    if (t.need) throw signInRequired(id, t.need.reason);
    if (this.answeredAnother(t, response)) return;
    if (!t.binding) {
      const found = await this.discoverBinding(t).catch(() => null);
      if (found && (await this.tokens.load(found))) return void (await this.bindAll([id], found));
      throw this.need(id, 'not signed in');
    }
    const tokens = await this.tokens.load(t.binding);
    if (!tokens?.refresh_token)
      throw this.need(id, tokens ? 'the access token was refused and there is no refresh token' : 'not signed in');
    await this.refresh(id);
  }

  /**
   * A 401 to a request that went out before the token held now was stored (sent with none before a sign-in finished,
   * or with the one a refresh has since replaced): it says nothing about the token held now, which the SDK sends next.
   * Taken as a refusal, it would ask for a sign-in (or spend a refresh) just after one succeeded.
   */
  private answeredAnother(t: Target, response: Response): boolean {
    if (!t.binding || !this.answered.has(response)) return false;
    const now = this.tokens.cached(keyOf(t.binding))?.access_token;
    // Compared as a request carries it: a header trims the value, and an empty token is sent as none. A token that
    // reads the same either way is the one refused.
    const held = now ? asSent(now) : undefined;
    return held !== undefined && this.answered.get(response) !== held;
  }

  private async discoverBinding(t: Target): Promise<Binding | null> {
    const { discoverOAuthServerInfo } = await clientSdk();
    const named = metadataUrlOf(t);
    const info = await discoverOAuthServerInfo(t.target.url, {
      ...(named ? { resourceMetadataUrl: new URL(named) } : {}),
      ...(this.deps.fetch ? { fetchFn: this.deps.fetch } : {}),
    });
    const probe = this.flows.provider(t.target, { kind: 'refresh' });
    probe.saveDiscoveryState({
      authorizationServerUrl: String(info.authorizationServerUrl),
      resourceMetadata: info.resourceMetadata,
      authorizationServerMetadata: info.authorizationServerMetadata,
    });
    const key = probe.key();
    return key && { ...key, resource_metadata_url: named };
  }

  private refresh(id: string): Promise<void> {
    return this.tokens.refresh(this.target(id));
  }

  /** A key's proactive refresh is due: refreshed for its first upstream, unless a sign-in is needed anyway. */
  private due(key: string, refreshable: boolean): void {
    const id = this.boundTo(key)[0];
    if (!id || this.target(id).need) return;
    if (!refreshable) return void this.require(key, 'the access token expired and the server gave no refresh token');
    this.refresh(id).catch(() => undefined);
  }

  /** Marks every upstream on the key as needing a sign-in (once), and answers the error to show. */
  private require(key: string, reason: string): GatehouseError {
    let first: string | null = null;
    for (const id of this.boundTo(key)) {
      const t = this.target(id);
      first ??= id;
      if (!t.need) t.need = { reason };
    }
    this.deps.log.warn('oauth: sign-in needed', { upstreams: this.boundTo(key), reason });
    this.notify();
    return signInRequired(first ?? '?', reason);
  }

  private need(id: string, reason: string, scopes?: string): GatehouseError {
    const t = this.target(id);
    t.need = { reason, ...(scopes ? { scopes } : {}) };
    this.notify();
    return signInRequired(id, reason);
  }

  /** The server asked for more scopes (insufficient_scope): the next sign-in asks for them too. */
  private stepUp(id: string, scope: string | undefined): GatehouseError {
    const t = this.target(id);
    const granted = t.binding ? this.tokens.cached(keyOf(t.binding))?.scope : undefined;
    const scopes = computeScopeUnion(t.target.scopes ?? undefined, granted, scope);
    return this.need(id, `the server asks for more permission${scope ? ` (${scope.slice(0, 200)})` : ''}`, scopes);
  }

  /**
   * A sign-in stored its tokens (one vault item) and now its upstreams are bound in upstreams.json: a stop between
   * leaves tokens nobody points at, overwritten by the next sign-in.
   */
  private async signedIn(flowIds: string[], binding: Binding): Promise<void> {
    await this.tokens.load(binding, true);
    const ids = [...flowIds, ...this.boundTo(keyOf(binding)), ...(await this.sameKeyUnbound(binding))];
    await this.bindAll(ids, binding);
    this.deps.reconnect([...new Set(ids)]);
  }

  /** Upstreams never signed in (added before this sign-in) whose discovery names the same issuer and resource: they share it. */
  private async sameKeyUnbound(binding: Binding): Promise<string[]> {
    const unbound = [...this.targets.values()].filter((x) => !x.binding);
    const found = await Promise.all(
      unbound.map(async (x) => {
        const b = await this.discoverBinding(x).catch(() => null);
        return b && keyOf(b) === keyOf(binding) ? x.target.id : null;
      }),
    );
    return found.filter((id): id is string => id !== null);
  }

  private async bindAll(ids: string[], binding: Binding): Promise<void> {
    for (const id of new Set(ids)) {
      const t = this.targets.get(id);
      if (!t) continue;
      t.binding = binding;
      t.need = null;
      await this.deps.bind(id, binding);
    }
  }
}

/** The bearer token a request carried (null: none), or undefined when its headers cannot be read. */
function bearerOf(headers: HeadersInit | undefined): string | null | undefined {
  try {
    const value = new Headers(headers).get('authorization');
    return value?.startsWith('Bearer ') ? value.slice('Bearer '.length) : null;
  } catch {
    return undefined;
  }
}

/** What a request given this token carries (undefined: a value no header can hold, so no request carried it). */
const asSent = (token: string): string | null | undefined => bearerOf([['authorization', `Bearer ${token}`]]);
