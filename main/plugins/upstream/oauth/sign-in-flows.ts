import { randomBytes } from 'node:crypto';
import type { FetchLike } from '@modelcontextprotocol/client';
import { clientSdk } from '../client-sdk.ts';
import type { Vault } from '../../../core/ports/ports.ts';
import { GatehouseError } from '../../../core/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import { startCallbackServer, type CallbackAnswer, type CallbackServer } from './callback-server.ts';
import { flowAccount, readItem, StoredFlow, type StoredTokens } from './oauth-vault.ts';
import { scrubOAuth, startFailure } from './oauth-errors.ts';
import { VaultOAuthProvider, type OAuthTarget } from './vault-provider.ts';
import { computeScopeUnion, keyOf, metadataUrlOpt, type Binding, type Target } from './oauth-target-state.ts';

export interface SignInFlowsDeps {
  vault: Vault;
  log: Logger;
  callbackPorts?: readonly number[];
  fetch?: FetchLike;
  /** how long a started sign-in waits for its browser step (default 10 minutes) */
  flowTtlMs?: number;
  /** the Client ID Metadata Document URL for upstreams that name none, asked at each sign-in */
  defaultClientMetadataUrl?(): string | null;
  /** tokens a provider stored or read: known values from then on */
  remember(key: string, t: StoredTokens): void;
  /** the upstream (an error when it is not an OAuth one) */
  target(id: string): Target;
  /** the upstream, when it is still there */
  find(id: string): Target | undefined;
  /** the browser step finished with tokens stored under `binding`: the upstreams of the flow are bound to it */
  signedIn(ids: string[], binding: Binding): Promise<void>;
  /** sign-in state changed */
  notify(): void;
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
 * The sign-ins under way, each waiting for its browser step, and the loopback callback server that step comes back
 * to: up while a sign-in is starting, listed or being answered, closed once idle.
 */
export class SignInFlows {
  private readonly flows = new Map<string, Flow>();
  private callback: CallbackServer | null = null;
  /** sign-ins between their first step and their flow's registration: the callback server stays up for them */
  private startingNow = 0;
  /** callbacks being answered: a close an earlier sign-in scheduled must not cut one off before its page is sent */
  private answering = 0;

  constructor(private readonly deps: SignInFlowsDeps) {}

  /** The sign-in the upstream is part of, if any. */
  of(id: string): { url: string; error: string | null } | undefined {
    return [...this.flows.values()].find((f) => f.ids.has(id));
  }

  /** Joins the upstream to the sign-in under way for it or for the same issuer and resource; false when there is none. */
  join(id: string, key: Binding | null): boolean {
    const joined = [...this.flows.values()].find((f) => f.ids.has(id) || (key && f.key === keyOf(key)));
    if (!joined) return false;
    joined.ids.add(id);
    return true;
  }

  forget(id: string): void {
    for (const f of this.flows.values()) f.ids.delete(id);
  }

  async start(t: Target): Promise<void> {
    this.startingNow++;
    try {
      await this.startFlow(t);
    } finally {
      this.startingNow--;
    }
  }

  async close(): Promise<void> {
    for (const f of this.flows.values()) clearTimeout(f.timer);
    this.flows.clear();
    await this.callback?.close();
    this.callback = null;
  }

  provider(
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
      (b, tokens) => this.deps.remember(keyOf(b), tokens),
    );
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
        ...metadataUrlOpt(t),
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
    this.listFlow(t, provider.key()!, state, String(url));
  }

  private listFlow(t: Target, binding: Binding, state: string, url: string): void {
    const flow: Flow = {
      key: keyOf(binding),
      binding,
      state,
      url,
      ids: new Set([t.target.id]),
      error: null,
      timer: setTimeout(() => void this.expire(state), this.deps.flowTtlMs ?? 600_000),
    };
    flow.timer.unref?.();
    this.flows.set(state, flow);
    this.deps.notify();
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
      const t = this.deps.find(id);
      if (t) t.need ??= { reason: 'the sign-in was not finished in time' };
    }
    await this.deps.vault.delete(flowAccount(f.binding.issuer, f.binding.resource)).catch(() => false);
    await this.closeCallbackIfIdle();
    this.deps.notify();
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
      return this.failed(flow, e);
    } finally {
      await this.unlist(flow);
    }
  }

  private failed(flow: Flow, e: unknown): CallbackAnswer {
    const message = scrubOAuth(e);
    for (const id of flow.ids) {
      const t = this.deps.find(id);
      if (t) t.need = { reason: `the sign-in failed: ${message}` };
    }
    this.deps.log.warn('oauth: a sign-in failed', { upstreams: [...flow.ids], error: message });
    return { status: 400, message: `The sign-in failed: ${message}` };
  }

  private async unlist(flow: Flow): Promise<void> {
    this.flows.delete(flow.state);
    await this.deps.vault.delete(flowAccount(flow.binding.issuer, flow.binding.resource)).catch(() => false);
    // Nothing is awaited from here to the answer being sent: no close timer can run in between.
    this.answering--;
    // Closed once this answer reached the browser, not before.
    setTimeout(() => void this.closeCallbackIfIdle(), 500).unref?.();
    this.deps.notify();
  }

  private async finish(flow: Flow, params: URLSearchParams): Promise<void> {
    const code = codeOf(params);
    const stored = await readItem(this.deps.vault, flowAccount(flow.binding.issuer, flow.binding.resource), StoredFlow);
    if (!stored || stored.state !== flow.state)
      throw new GatehouseError('upstream_error', 'the sign-in is no longer on record');
    const first = this.deps.target([...flow.ids][0]!);
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
      ...(this.deps.fetch ? { fetchFn: this.deps.fetch } : {}),
    });
    const named = stored.discovery.resourceMetadataUrl;
    await this.deps.signedIn([...flow.ids], {
      ...provider.key()!,
      resource_metadata_url: typeof named === 'string' ? named : null,
    });
  }
}

/** The authorization code the callback carried, or the error the authorization server answered instead. */
function codeOf(params: URLSearchParams): string {
  const error = params.get('error');
  if (error)
    throw new GatehouseError(
      'upstream_error',
      `the authorization server answered ${error.slice(0, 100)}${params.get('error_description') ? `: ${params.get('error_description')!.slice(0, 300)}` : ''}`,
    );
  const code = params.get('code');
  if (!code) throw new GatehouseError('upstream_error', 'the callback carried no code');
  return code;
}
