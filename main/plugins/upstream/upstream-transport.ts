import type { ProtocolEra } from '../../contract/protocol-era.ts';
import type { ClientOptions, Transport } from '@modelcontextprotocol/client';
import type { ClientSdk } from './client-sdk.ts';
import type { LineRing } from '../../lib/line-ring.ts';
import type { Logger } from '../../lib/logger.ts';
import type { StoredTransport, UpstreamSecrets } from './upstream-data.ts';
import type { UpstreamAuth } from './oauth/oauth-errors.ts';
import type { StdioLauncher } from './sandbox/confinement.ts';
import { MAX_UPSTREAM_MESSAGE_BYTES } from './stdio-transport.ts';

/** What a transport module is made from: the connection's spec (its era is updated in place as it is learnt). */
export interface TransportSpec {
  id: string;
  transport: StoredTransport;
  secrets: UpstreamSecrets;
  token: string | null;
  era: ProtocolEra | null;
  auth?: UpstreamAuth;
  launcher?: StdioLauncher;
}

/** The options of every client of this upstream that depend on how it is reached. */
export type TransportClientOptions = Pick<ClientOptions, 'versionNegotiation'>;

/**
 * How one upstream is reached, as the connection (connection.ts) uses it: a stdio process (stdio-upstream.ts) or a
 * remote HTTP session (http-upstream.ts). The connection keeps the lifecycle; this makes the transports and says
 * what their ends mean.
 */
export interface UpstreamTransport {
  /** the client options this way of reaching it asks for (the era negotiation of a remote session) */
  clientOptions(): TransportClientOptions;
  /** what `client.connect` is told (a known era skips the probe) */
  connectOptions(): { prior?: { kind: 'legacy' } };
  /** the live session's transport; `attempt` gets what this attempt's process writes to stderr */
  openLive(sdk: ClientSdk, attempt: LineRing): Promise<Transport>;
  /** a session of its own beside the live one (a probe): its start's helpers end with `close` */
  openProbe(sdk: ClientSdk): Promise<{ transport: Transport; close(): Promise<void> }>;
  /** ends the live session's start helpers (a confined process's proxy) */
  endLive(): Promise<void>;
  /** why a connect failed, in the upstream's own words where it has any */
  startFailure(e: unknown, transport: Transport, attempt: LineRing): Promise<string>;
  /** the live session connected in this era */
  connected(era: ProtocolEra | null): void;
  /** what the health says once the live session ended; `scrub` masks what the upstream wrote */
  ended(scrub: (text: string) => string): string;
  /** a call found the session gone: the connection ends it itself (a process's exit says so; a remote session does not) */
  readonly closesOnLoss: boolean;
  /** a note for the upstream's log when a tool's error answer shows its sandbox refused something, else null */
  annotate(text: string): string | null;
}

/** An answer over the size bound was dropped: said in the service's log, for either transport. */
export function warnOversize(log: Logger, id: string): (bytes: number) => void {
  return (bytes) =>
    log.warn('upstream: an answer over the size bound was refused', {
      upstream: id,
      bytes,
      limit_bytes: MAX_UPSTREAM_MESSAGE_BYTES,
    });
}
