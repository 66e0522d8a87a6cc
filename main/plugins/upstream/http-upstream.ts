import type { ProtocolEra } from '../../contract/protocol-era.ts';
import type { Transport } from '@modelcontextprotocol/client';
import type { ClientSdk } from './client-sdk.ts';
import type { Logger } from '../../lib/logger.ts';
import type { StoredTransport } from './upstream-data.ts';
import { MAX_UPSTREAM_MESSAGE_BYTES } from './stdio-transport.ts';
import { boundedFetch } from './bounded-fetch.ts';
import { ownSignalFetch } from './own-signal-fetch.ts';
import {
  warnOversize,
  type TransportClientOptions,
  type TransportSpec,
  type UpstreamTransport,
} from './upstream-transport.ts';

type Http = Extract<StoredTransport, { kind: 'http' }>;

/**
 * A remote upstream: a Streamable HTTP session (2026-07-28 first, the 2025 handshake as fallback; a known era skips
 * the probe), or the old SSE transport, which has no 2026-07-28. Its headers, its bearer token or its OAuth sign-in
 * go on every request.
 */
export class HttpUpstream implements UpstreamTransport {
  readonly closesOnLoss = true;

  constructor(
    private readonly spec: TransportSpec,
    private readonly t: Http,
    private readonly log: Logger,
  ) {}

  clientOptions(): TransportClientOptions {
    return !this.t.sse && this.spec.era === null ? { versionNegotiation: { mode: 'auto' } } : {};
  }

  connectOptions(): { prior?: { kind: 'legacy' } } {
    return this.spec.era === '2025' ? { prior: { kind: 'legacy' } } : {};
  }

  /** The era it answered in is remembered: the next connect skips the probe. */
  connected(era: ProtocolEra | null): void {
    this.spec.era = era;
  }

  openLive(sdk: ClientSdk): Promise<Transport> {
    return Promise.resolve(this.open(sdk));
  }

  openProbe(sdk: ClientSdk): Promise<{ transport: Transport; close(): Promise<void> }> {
    return Promise.resolve({ transport: this.open(sdk), close: () => Promise.resolve() });
  }

  endLive(): Promise<void> {
    return Promise.resolve();
  }

  startFailure(e: unknown): Promise<string> {
    return Promise.resolve(e instanceof Error ? e.message : String(e));
  }

  ended(): string {
    return 'the session was closed';
  }

  annotate(): null {
    return null;
  }

  private open(sdk: ClientSdk): Transport {
    const t = this.t;
    // Pairs, not an object: header names are the person's, and an object keyed by them is one more place a name every
    // object has could go wrong (`__proto__` itself is refused at add: Node's fetch never sends it).
    const headers: Array<[string, string]> = this.spec.secrets.headers.map((h) => [h.name, h.value]);
    if (this.spec.token) headers.push(['Authorization', `Bearer ${this.spec.token}`]);
    // OAuth: the coordinator's token per request; a 403 insufficient_scope is thrown to us (explain), never a browser from here.
    const oauth = this.spec.auth
      ? { authProvider: this.spec.auth.provider, onInsufficientScope: 'throw' as const }
      : {};
    // The headers go on the event stream's GET too (the SDK's SSE transport sends requestInit's on both).
    // The coordinator's fetch is outermost: the 401 it sees is the very response the SDK hands to onUnauthorized.
    const tagged = (base: typeof fetch) => this.spec.auth?.fetch(base) ?? base;
    if (t.sse)
      return new sdk.SSEClientTransport(new URL(t.url), {
        requestInit: { headers },
        fetch: tagged(ownSignalFetch()),
        ...oauth,
      });
    // What it answers is bounded as a stdio upstream's messages are (bounded-fetch.ts).
    return new sdk.StreamableHTTPClientTransport(new URL(t.url), {
      requestInit: { headers },
      fetch: tagged(boundedFetch(MAX_UPSTREAM_MESSAGE_BYTES, warnOversize(this.log, this.spec.id), ownSignalFetch())),
      ...oauth,
    });
  }
}
