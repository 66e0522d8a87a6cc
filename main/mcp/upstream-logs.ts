import type { LogLevel, LogMessage } from '../plugins/upstream/log-relay.ts';
import { passes } from '../plugins/upstream/log-relay.ts';

/**
 * Upstreams' log messages on the request streams of 2026-07-28 clients
 * (docs/upstreams.md, "Logs"). That revision has no logging/setLevel and no
 * stream of its own for them: a request carries the level it wants
 * (`_meta["io.modelcontextprotocol/logLevel"]`) and hears the messages sent
 * while it is answered. A tools/call of an upstream's tool that names a level
 * taps that upstream's messages at that level until it is answered. (The 2025
 * era's GET stream hears them through ListChanges.logMessage.)
 */
export class RequestLogTaps {
  private readonly taps = new Set<{ upstream: string; threshold: LogLevel; send: (m: LogMessage) => void }>();

  /** Hears `upstream`'s messages at `threshold` or above; returns the end of it. */
  tap(upstream: string, threshold: LogLevel, send: (m: LogMessage) => void): () => void {
    const t = { upstream, threshold, send };
    this.taps.add(t);
    return () => this.taps.delete(t);
  }

  deliver(upstream: string, m: LogMessage): void {
    for (const t of this.taps) if (t.upstream === upstream && passes(m.level, t.threshold)) t.send(m);
  }
}
