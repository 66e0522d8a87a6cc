import type { IncomingMessage } from 'node:http';
import { type HttpMethod, type HttpSide, NetworkError } from './http-side.ts';
import type { BridgeLogger } from './log.ts';
import type { Target } from './target.ts';

/**
 * One HTTP exchange with the endpoint, waiting for it to come up: while the
 * target cannot be found or refuses connections (nothing reached it), retry
 * with backoff until the deadline. Anything else is the caller's to judge.
 */

export class Unreachable extends Error {
  override name = 'Unreachable';
  constructor(
    readonly reason: string,
    readonly waitedMs: number,
  ) {
    super(reason);
  }
}

export class Aborted extends Error {
  override name = 'Aborted';
}

export class Link {
  private waitingSaid = false;
  private everReached = false;

  constructor(
    private readonly http: HttpSide,
    private readonly target: Target,
    private readonly baseHeaders: () => Promise<Record<string, string>>,
    private readonly log: BridgeLogger,
    readonly connectTimeoutMs: number,
  ) {}

  async send(method: HttpMethod, headers: Record<string, string>, body: Buffer | undefined, signal: AbortSignal, waitUntil?: number): Promise<IncomingMessage> {
    const started = Date.now();
    const base = await this.baseHeaders();
    let delay = 50;
    for (;;) {
      if (signal.aborted) throw new Aborted('aborted');
      let reason: string;
      const found = await this.target.lookup();
      if (found.ok) {
        try {
          const res = await this.http.send(found.url, method, { ...base, ...headers }, body, signal);
          if (this.waitingSaid) {
            this.waitingSaid = false;
            // "again" only when it was reached before: the first connection after waiting for start-up is not a recovery.
            this.log.info(this.everReached ? 'the MCP endpoint is reachable again' : 'the MCP endpoint is up', { url: found.url.href });
          }
          this.everReached = true;
          return res;
        } catch (e) {
          if (signal.aborted) throw new Aborted('aborted');
          if (!(e instanceof NetworkError) || !e.unreached) throw e;
          this.target.invalidate();
          reason = `${found.url.href}: ${e.code === 'ECONNREFUSED' ? 'connection refused' : e.message}`;
        }
      } else {
        reason = found.reason;
      }
      if (waitUntil === undefined || Date.now() + delay > waitUntil) throw new Unreachable(reason, Date.now() - started);
      if (!this.waitingSaid) {
        this.waitingSaid = true;
        this.log.info(`waiting for the MCP endpoint to come up (up to ${Math.round(this.connectTimeoutMs / 1000)} s)`, { reason });
      }
      await sleep(delay, signal);
      delay = Math.min(delay * 2, 1000);
    }
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
