import type { IncomingMessage } from 'node:http';
import { type HttpMethod, type HttpSide, NetworkError } from './http-side.ts';
import type { BridgeLogger } from './log.ts';
import type { TargetSource } from './target.ts';
import type { Failure } from './failures.ts';
import { retry, sleep } from '../main/lib/retry.ts';

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
    /** what the client is told instead of "cannot reach": the target refused, waiting would not help */
    readonly failure?: Failure,
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
    private readonly target: TargetSource,
    private readonly baseHeaders: () => Promise<Record<string, string>>,
    private readonly log: BridgeLogger,
    readonly connectTimeoutMs: number,
  ) {}

  async send(
    method: HttpMethod,
    headers: Record<string, string>,
    body: Buffer | undefined,
    signal: AbortSignal,
    waitUntil?: number,
  ): Promise<IncomingMessage> {
    const started = Date.now();
    const base = await this.baseHeaders();
    let url: URL | undefined;
    try {
      const res = await retry(
        async () => {
          if (signal.aborted) throw new Aborted('aborted');
          const found = await this.target.lookup(signal);
          if (!found.ok && found.failure) throw new Unreachable(found.reason, Date.now() - started, found.failure);
          if (!found.ok) throw new NotReached(found.reason);
          url = found.url;
          try {
            return await this.http.send(found.url, method, { ...base, ...headers }, body, signal);
          } catch (e) {
            if (signal.aborted) throw new Aborted('aborted');
            if (!(e instanceof NetworkError) || !e.unreached) throw e;
            this.target.invalidate();
            throw new NotReached(`${found.url.href}: ${e.code === 'ECONNREFUSED' ? 'connection refused' : e.message}`);
          }
        },
        {
          // Nothing reached the endpoint, so any method may go again, until the deadline.
          attempts: waitUntil === undefined ? 1 : Infinity,
          maxElapsedMs: waitUntil === undefined ? 0 : Math.max(0, waitUntil - started),
          baseMs: 50,
          capMs: 1000,
          jitter: 0,
          retryable: (e) => e instanceof NotReached,
          sleep: (ms) => sleep(ms, signal),
          onRetry: ({ error }) => {
            if (this.waitingSaid) return;
            this.waitingSaid = true;
            this.log.info(
              `waiting for the MCP endpoint to come up (up to ${Math.round(this.connectTimeoutMs / 1000)} s)`,
              { reason: (error as Error).message },
            );
          },
        },
      );
      if (this.waitingSaid) {
        this.waitingSaid = false;
        // "again" only when it was reached before: the first connection after waiting for start-up is not a recovery.
        this.log.info(this.everReached ? 'the MCP endpoint is reachable again' : 'the MCP endpoint is up', {
          url: url?.href,
        });
      }
      this.everReached = true;
      return res;
    } catch (e) {
      if (e instanceof NotReached) throw new Unreachable(e.message, Date.now() - started);
      throw e;
    }
  }
}

/** Nothing reached the endpoint this attempt (not found, refused). */
class NotReached extends Error {}
