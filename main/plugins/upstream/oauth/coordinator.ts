import { randomBytes } from 'node:crypto';
import type { AuthProvider, FetchLike } from '@modelcontextprotocol/client';
import { clientSdk } from '../client-sdk.ts';
import type { OAuthRevocation, OAuthStatus } from '../../../contract/oauth-status.ts';
import type { Vault } from '../../../core/ports/ports.ts';
import { GatehouseError } from '../../../core/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import { systemTimers, type TimerHandle, type Timers } from '../../../lib/clock.ts';
import { startCallbackServer, type CallbackAnswer, type CallbackServer } from './callback-server.ts';
import {
  clientAccount,
  flowAccount,
  readItem,
  StoredClient,
  StoredFlow,
  StoredTokens,
  tokensAccount,
} from './oauth-vault.ts';
import { scrubOAuth, sdkFailure, startFailure, type UpstreamAuth } from './oauth-errors.ts';
import { revokeTokens, type RevokeInput } from './revoke.ts';
import { challengeOf, probeChallenge, type Challenge } from './challenge.ts';
import { preregisteredClient, signInRequired, VaultOAuthProvider, type OAuthTarget } from './vault-provider.ts';

/**
 * The one place in the service that signs upstreams in (docs/oauth.md). Keyed
 * by issuer + resource: every upstream bound to the same key shares one
 * sign-in, one token set and one refresh (single-flight, so two connections
 * never spend the same rotating refresh token twice). A refresh that fails
 * (`invalid_grant`, or no refresh token at all) becomes one "sign in again"
 * item on each upstream concerned and nothing else: no browser is ever
 * opened except when a person asks to sign in.
 */

export interface Binding {
  issuer: string;
  resource: string;
  /** where the server's 401 said its protected resource metadata is (RFC 9728 section 5.1), when it said so: a refresh discovers there */
  resource_metadata_url?: string | null;
}
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

interface Need {
  reason: string;
  scopes?: string;
  /** a person signed out (not a refused refresh or an expiry): shown as `signed_out`, never a "sign in again" item */
  signedOut?: boolean;
}
interface Target {
  target: OAuthTarget;
  binding: Binding | null;
  need: Need | null;
  /** what the server's last 401 said (a sign-in's probe, or a connection's request) */
  challenge: Challenge | null;
}
interface Flow {
  key: string;
  binding: Binding;
  state: string;
  url: string;
  ids: Set<string>;
  timer: ReturnType<typeof setTimeout>;
  error: string | null;
  finishing?: boolean;
}

/**
 * The SDK's `computeScopeUnion` (space-separated scope tokens, each once, in order), here so that a status,
 * asked before any upstream connected, never loads the SDK (client-sdk.ts).
 */
function computeScopeUnion(...scopes: Array<string | undefined>): string | undefined {
  const seen = new Set<string>();
  for (const scope of scopes) for (const token of scope?.split(/\s+/) ?? []) if (token) seen.add(token);
  return seen.size > 0 ? [...seen].join(' ') : undefined;
}

const SIGNED_OUT: Need = { reason: 'signed out', signedOut: true };
const keyOf = (b: Binding) => `${b.issuer}\n${b.resource}`;
/** refresh this long before expiry (or at 80% of a shorter lifetime) */
const EARLY_MS = 60_000;
/** token values of one key kept as known (a few refreshes' worth) */
const MAX_KNOWN_TOKENS = 8;

export class OAuthCoordinator {
  private readonly targets = new Map<string, Target>();
  private readonly flows = new Map<string, Flow>();
  private readonly refreshing = new Map<string, Promise<void>>();
  private readonly tokens = new Map<string, StoredTokens>();
  /**
   * Every token value of a key this run has held, newest last, bounded: what the upstreams' answers are masked of
   * (connection.ts). A token refreshed away may still be valid until it expires, so it stays among them.
   */
  private readonly seenTokens = new Map<string, string[]>();
  private readonly timers = new Map<string, TimerHandle>();
  private readonly refreshTimers: Timers;
  private readonly waiters = new Set<() => void>();
  private callback: CallbackServer | null = null;
  private starting: Promise<unknown> = Promise.resolve();
  /** sign-ins between their first step and their flow's registration: the callback server stays up for them */
  private startingNow = 0;
  /** callbacks being answered: a close an earlier sign-in scheduled must not cut one off before its page is sent */
  private answering = 0;

  constructor(private readonly deps: CoordinatorDeps) {
    this.refreshTimers = deps.refreshTimers ?? systemTimers;
  }

  /** An OAuth upstream (at load and at add); `binding` is what it last signed in with. */
  async register(target: OAuthTarget, binding: Binding | null): Promise<void> {
    this.targets.set(target.id, { target, binding, need: null, challenge: null });
    if (binding)
      await this.load(binding).catch((e: unknown) =>
        this.deps.log.warn('oauth: could not read the sign-in from the vault', {
          upstream: target.id,
          error: scrubOAuth(e),
        }),
      );
  }

  forget(id: string): void {
    this.targets.delete(id);
    for (const f of this.flows.values()) f.ids.delete(id);
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
        return b ? (this.seenTokens.get(keyOf(b)) ?? []) : [];
      },
    };
  }

  status(id: string): OAuthStatus {
    const t = this.target(id);
    const tokens = t.binding ? this.tokens.get(keyOf(t.binding)) : undefined;
    const flow = [...this.flows.values()].find((f) => f.ids.has(id));
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
      registration: t.target.client_id ? 'preregistered' : (this.registrations.get(t.binding?.issuer ?? '') ?? null),
      authorization_url: flow?.url ?? null,
    };
  }
  private readonly registrations = new Map<string, OAuthStatus['registration']>();

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
    const run = this.starting.then(() => {
      const joined = [...this.flows.values()].find((f) => f.ids.has(id) || (key && f.key === keyOf(key)));
      return joined ? void joined.ids.add(id) : this.start(t);
    });
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
    let revocation: OAuthRevocation = { outcome: 'not_signed_in', warning: null };
    if (t.binding) {
      const b = t.binding;
      const key = keyOf(b);
      const ids = this.boundTo(key);
      for (const other of ids) this.target(other).need = SIGNED_OUT;
      this.refreshTimers.clear(this.timers.get(key));
      this.timers.delete(key);
      await this.refreshing.get(key)?.catch(() => undefined);
      const tokens = await readItem(this.deps.vault, tokensAccount(b.issuer, b.resource), StoredTokens);
      if (tokens)
        revocation = await revokeTokens({
          tokens,
          client: await this.clientFor(t.target, b.issuer),
          ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}),
        });
      if (revocation.warning)
        this.deps.log.warn('oauth: sign-out could not revoke at the authorization server', {
          upstreams: ids,
          warning: revocation.warning,
        });
      await this.deps.vault.delete(tokensAccount(b.issuer, b.resource));
      this.tokens.delete(key);
      this.deps.reconnect(ids);
    }
    t.need = SIGNED_OUT;
    this.notify();
    return { ...this.status(id), revocation };
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

  async close(): Promise<void> {
    for (const f of this.flows.values()) clearTimeout(f.timer);
    this.flows.clear();
    for (const timer of this.timers.values()) this.refreshTimers.clear(timer);
    this.timers.clear();
    await this.callback?.close();
    this.callback = null;
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

  /** Remembers a key's tokens as known values, from the moment they are stored or read. */
  private remember(key: string, t: StoredTokens): void {
    const known = (this.seenTokens.get(key) ?? []).filter((v) => v !== t.access_token && v !== t.refresh_token);
    known.push(t.access_token, ...(t.refresh_token ? [t.refresh_token] : []));
    this.seenTokens.set(key, known.slice(-MAX_KNOWN_TOKENS));
  }

  /** The key's tokens (cached); `fresh` reads the vault again, replacing the cached copy only once read (never a moment without). */
  private async load(b: Binding, fresh = false): Promise<StoredTokens | undefined> {
    const key = keyOf(b);
    const cached = this.tokens.get(key);
    if (cached && !fresh) return cached;
    const t = await readItem(this.deps.vault, tokensAccount(b.issuer, b.resource), StoredTokens);
    if (t) {
      this.remember(key, t);
      this.tokens.set(key, t);
      this.schedule(key, t);
    } else if (fresh) this.tokens.delete(key);
    const client = await readItem(this.deps.vault, clientAccount(b.issuer), StoredClient);
    if (client) this.registrations.set(b.issuer, client.registration);
    return t;
  }

  private async token(id: string): Promise<string | undefined> {
    const t = this.targets.get(id);
    if (!t?.binding || t.need) return undefined;
    let tokens = await this.load(t.binding);
    if (tokens?.expires_at !== undefined && tokens.expires_at - Date.now() < 5_000) {
      // Never assume a refresh token: without one, an expired token is a sign-in to do, asked for once.
      if (!tokens.refresh_token)
        return void this.require(keyOf(t.binding), 'the access token expired and the server gave no refresh token');
      await this.refresh(id).catch(() => undefined);
      tokens = this.tokens.get(keyOf(t.binding));
    }
    return tokens?.access_token;
  }

  /** A 401: an upstream not bound yet may find a sign-in another upstream made; else refresh once; else sign in. */
  private async unauthorized(id: string, response: Response): Promise<void> {
    const t = this.target(id);
    const said = await challengeOf(response);
    if (said.resourceMetadataUrl || said.scope) t.challenge = said;
    if (t.need) throw signInRequired(id, t.need.reason);
    if (!t.binding) {
      const found = await this.discoverBinding(t).catch(() => null);
      if (found && (await this.load(found))) return void (await this.bindAll([id], found));
      throw this.need(id, 'not signed in');
    }
    const tokens = await this.load(t.binding);
    if (!tokens?.refresh_token)
      throw this.need(id, tokens ? 'the access token was refused and there is no refresh token' : 'not signed in');
    await this.refresh(id);
  }

  private async discoverBinding(t: Target): Promise<Binding | null> {
    const { discoverOAuthServerInfo } = await clientSdk();
    const named = this.metadataUrlOf(t);
    const info = await discoverOAuthServerInfo(t.target.url, {
      ...(named ? { resourceMetadataUrl: new URL(named) } : {}),
      ...(this.deps.fetch ? { fetchFn: this.deps.fetch } : {}),
    });
    const probe = this.provider(t.target, { kind: 'refresh' });
    probe.saveDiscoveryState({
      authorizationServerUrl: String(info.authorizationServerUrl),
      resourceMetadata: info.resourceMetadata,
      authorizationServerMetadata: info.authorizationServerMetadata,
    });
    const key = probe.key();
    return key && { ...key, resource_metadata_url: named };
  }

  /** The protected resource metadata URL a 401 of this server named (now, or when it signed in), else null: the well-known ones. */
  private metadataUrlOf(t: Target): string | null {
    return t.challenge?.resourceMetadataUrl ?? t.binding?.resource_metadata_url ?? null;
  }

  private metadataUrlOpt(t: Target): { resourceMetadataUrl?: URL } {
    const named = this.metadataUrlOf(t);
    return named ? { resourceMetadataUrl: new URL(named) } : {};
  }

  /** One refresh per issuer + resource at a time, whoever asks. */
  private refresh(id: string): Promise<void> {
    const t = this.target(id);
    const key = keyOf(t.binding!);
    const running = this.refreshing.get(key);
    if (running) return running;
    const run = this.doRefresh(t, key).finally(() => this.refreshing.delete(key));
    this.refreshing.set(key, run);
    return run;
  }

  private async doRefresh(t: Target, key: string): Promise<void> {
    const provider = this.provider(t.target, { kind: 'refresh' });
    const { auth } = await clientSdk();
    try {
      await auth(provider, { serverUrl: t.target.url, ...this.metadataUrlOpt(t), ...this.fetchOpt() });
    } catch (e) {
      if (e instanceof GatehouseError && e.code === 'sign_in_required') {
        this.tokens.delete(key);
        // A resource now naming another authorization server has no tokens under the new key: a sign-in, not a refused refresh.
        const now = provider.key();
        throw this.require(
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
      throw new GatehouseError(
        'upstream_unavailable',
        `upstream '${t.target.id}': refreshing its sign-in failed (${scrubOAuth(e)}); Gatehouse tries again`,
      );
    }
    const b = provider.key()!;
    if (keyOf(b) !== key) return void this.require(key, 'its authorization server changed');
    await this.load(b, true);
    this.deps.changed();
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
    const granted = t.binding ? this.tokens.get(keyOf(t.binding))?.scope : undefined;
    const scopes = computeScopeUnion(t.target.scopes ?? undefined, granted, scope);
    return this.need(id, `the server asks for more permission${scope ? ` (${scope.slice(0, 200)})` : ''}`, scopes);
  }

  private schedule(key: string, t: StoredTokens): void {
    this.refreshTimers.clear(this.timers.get(key));
    if (t.expires_at === undefined) return;
    const left = t.expires_at - Date.now();
    const wait = Math.max(1_000, left - Math.min(EARLY_MS, left * 0.2));
    const timer = this.refreshTimers.set(
      () => {
        this.timers.delete(key);
        const id = this.boundTo(key)[0];
        if (!id || this.target(id).need) return;
        if (!t.refresh_token)
          return void this.require(key, 'the access token expired and the server gave no refresh token');
        this.refresh(id).catch(() => undefined);
      },
      Math.min(wait, 2 ** 31 - 1),
    );
    timer.unref?.();
    this.timers.set(key, timer);
  }

  private provider(
    target: OAuthTarget,
    run: ConstructorParameters<typeof VaultOAuthProvider>[4],
    cb?: { redirectUri: string; redirectUris: string[] },
  ): VaultOAuthProvider {
    const ports = this.deps.callbackPorts ?? [];
    const uris =
      cb?.redirectUris ??
      this.callback?.redirectUris ??
      ports.filter((p) => p > 0).map((p) => `http://127.0.0.1:${p}/oauth/callback`);
    const metadataUrl = target.client_metadata_url ?? this.deps.defaultClientMetadataUrl?.() ?? null;
    return new VaultOAuthProvider(
      this.deps.vault,
      { ...target, client_metadata_url: metadataUrl },
      cb?.redirectUri ?? uris[0] ?? 'http://127.0.0.1/oauth/callback',
      uris,
      run,
      (b, t) => this.remember(keyOf(b), t),
    );
  }

  /**
   * The SDK registers a client for the scope asked now, and an authorization server may hold it to that (oidc-provider
   * does): a client registered for the 401's one scope could never step up. The registration asks for every scope the
   * resource lists and the person's too; the authorization still asks only for what the sign-in needs.
   */
  private registeringForAllScopes(provider: VaultOAuthProvider, target: OAuthTarget): FetchLike {
    const base = this.deps.fetch ?? fetch;
    return (url, init) => {
      const d = provider.discovered;
      const endpoint = d?.authorizationServerMetadata?.registration_endpoint;
      if (
        !endpoint ||
        init?.method !== 'POST' ||
        typeof init.body !== 'string' ||
        String(url) !== String(new URL(endpoint))
      )
        return base(url, init);
      const body = JSON.parse(init.body) as { scope?: string };
      const scope = computeScopeUnion(
        body.scope,
        target.scopes ?? undefined,
        d.resourceMetadata?.scopes_supported?.join(' '),
      );
      return base(url, { ...init, body: JSON.stringify({ ...body, ...(scope ? { scope } : {}) }) });
    };
  }

  private fetchOpt(): { fetchFn?: FetchLike } {
    return this.deps.fetch ? { fetchFn: this.deps.fetch } : {};
  }

  private async start(t: Target): Promise<void> {
    this.startingNow++;
    try {
      await this.startFlow(t);
    } finally {
      this.startingNow--;
    }
  }

  private async startFlow(t: Target): Promise<void> {
    const cb = await this.ensureCallback();
    const state = randomBytes(32).toString('base64url');
    let url: URL | null = null;
    const provider = this.provider(t.target, { kind: 'start', state, onAuthorizationUrl: (u) => (url = u) }, cb);
    // The person's scopes, those the 401 named and those a step-up asked for; none of them: the metadata's scopes_supported (the SDK).
    const scope = computeScopeUnion(t.target.scopes ?? undefined, t.challenge?.scope, t.need?.scopes);
    const { auth } = await clientSdk();
    try {
      const result = await auth(provider, {
        serverUrl: t.target.url,
        ...(scope ? { scope } : {}),
        ...this.metadataUrlOpt(t),
        forceReauthorization: true,
        fetchFn: this.registeringForAllScopes(provider, t.target),
      });
      if (result === 'AUTHORIZED' || !url)
        throw new GatehouseError(
          'upstream_error',
          `upstream '${t.target.id}': the authorization server did not ask for a sign-in`,
        );
    } catch (e) {
      await this.closeCallbackIfIdle();
      throw e instanceof GatehouseError ? e : startFailure(t.target.id, e);
    }
    const binding = provider.key()!;
    const flow: Flow = {
      key: keyOf(binding),
      binding,
      state,
      url: String(url),
      ids: new Set([t.target.id]),
      error: null,
      timer: setTimeout(() => void this.expire(state), this.deps.flowTtlMs ?? 600_000),
    };
    flow.timer.unref?.();
    this.flows.set(state, flow);
    this.notify();
  }

  private async ensureCallback(): Promise<CallbackServer> {
    this.callback ??= await startCallbackServer((p) => this.onCallback(p), this.deps.callbackPorts);
    return this.callback;
  }

  private async closeCallbackIfIdle(): Promise<void> {
    if (this.flows.size || this.startingNow || this.answering || !this.callback) return;
    const cb = this.callback;
    this.callback = null;
    await cb.close();
  }

  private async expire(state: string): Promise<void> {
    const f = this.flows.get(state);
    if (!f) return;
    this.flows.delete(state);
    for (const id of f.ids) {
      const t = this.targets.get(id);
      if (t) t.need ??= { reason: 'the sign-in was not finished in time' };
    }
    await this.deps.vault.delete(flowAccount(f.binding.issuer, f.binding.resource)).catch(() => false);
    await this.closeCallbackIfIdle();
    this.notify();
  }

  /** The browser came back. An unknown state is refused and leaves the sign-in under way untouched. */
  private async onCallback(params: URLSearchParams): Promise<CallbackAnswer> {
    const state = params.get('state');
    const flow = state ? this.flows.get(state) : undefined;
    if (!flow || flow.finishing)
      return {
        status: 400,
        message: 'This sign-in is unknown or has expired (its state does not match). Start it again from Gatehouse.',
      };
    // The flow stays listed (its upstreams still `signing_in`) until its tokens are stored: a waiter woken in between
    // would otherwise read `signed_out` and give up on a sign-in that is about to succeed. A second callback is refused.
    flow.finishing = true;
    clearTimeout(flow.timer);
    this.answering++;
    try {
      await this.finish(flow, params);
      return { status: 200, message: 'Signed in to Gatehouse. You can close this tab.' };
    } catch (e) {
      const message = scrubOAuth(e);
      for (const id of flow.ids)
        if (this.targets.has(id)) this.target(id).need = { reason: `the sign-in failed: ${message}` };
      this.deps.log.warn('oauth: a sign-in failed', { upstreams: [...flow.ids], error: message });
      return { status: 400, message: `The sign-in failed: ${message}` };
    } finally {
      this.flows.delete(flow.state);
      await this.deps.vault.delete(flowAccount(flow.binding.issuer, flow.binding.resource)).catch(() => false);
      // Nothing is awaited from here to the answer being sent: no close timer can run in between.
      this.answering--;
      // Closed once this answer reached the browser, not before.
      setTimeout(() => void this.closeCallbackIfIdle(), 500).unref?.();
      this.notify();
    }
  }

  private async finish(flow: Flow, params: URLSearchParams): Promise<void> {
    const error = params.get('error');
    if (error)
      throw new GatehouseError(
        'upstream_error',
        `the authorization server answered ${error.slice(0, 100)}${params.get('error_description') ? `: ${params.get('error_description')!.slice(0, 300)}` : ''}`,
      );
    const code = params.get('code');
    if (!code) throw new GatehouseError('upstream_error', 'the callback carried no code');
    const stored = await readItem(this.deps.vault, flowAccount(flow.binding.issuer, flow.binding.resource), StoredFlow);
    if (!stored || stored.state !== flow.state)
      throw new GatehouseError('upstream_error', 'the sign-in is no longer on record');
    const first = this.target([...flow.ids][0]!);
    const provider = this.provider(
      first.target,
      { kind: 'callback', flow: stored },
      { redirectUri: stored.redirect_uri, redirectUris: [stored.redirect_uri] },
    );
    const iss = params.get('iss');
    const { auth } = await clientSdk();
    await auth(provider, {
      serverUrl: first.target.url,
      authorizationCode: code,
      ...(iss !== null ? { iss } : {}),
      ...this.fetchOpt(),
    });
    const named = stored.discovery.resourceMetadataUrl;
    const binding = { ...provider.key()!, resource_metadata_url: typeof named === 'string' ? named : null };
    // Tokens first (one vault item), then the binding in upstreams.json: a stop between leaves tokens nobody points at, overwritten by the next sign-in.
    await this.load(binding, true);
    const ids = [...flow.ids, ...this.boundTo(keyOf(binding)), ...(await this.sameKeyUnbound(binding))];
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
