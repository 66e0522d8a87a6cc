import type { z } from 'zod';
import type { CloudErrorRecord, StopReason } from '../contract/cloud-status.ts';
import { CLOUD_BASE_PATH } from '../contract/cloud/paths.ts';
import { uuidv7 } from '../lib/ids.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { parseRetryAfter, retry } from '../lib/retry.ts';
import { VERSION } from '../version.ts';
import { breakerGate, breakerTrip, CLOSED, type BreakerState } from './breaker.ts';
import { CloudClientError, fromAnswer, isCloudClientError, unavailable } from './errors.ts';
import { signRequest, type SigningKey } from './request-signing.ts';
import { nodeTransport, TransportError, type Transport } from './transport.ts';

/**
 * The client policy (docs/cloud-client.md "Behaviour in short"), once, for every endpoint: at most
 * 3 attempts; delay min(0.5 s * 2^(n-1), 5 s) with jitter (main/lib/retry.ts);
 * network errors, 408, 429 rate_limited and 5xx retried, nothing else;
 * Retry-After honoured up to 30 s interactive / 60 s background; one
 * X-Request-Id (UUIDv7) for the logical request and X-Attempt per try; one
 * clock-offset resync and re-sign on token_expired; the circuit breaker
 * after retries run out. Every failure is recorded with its request id and
 * why the client stopped, for the console and the health report.
 */

export type CallMode = 'interactive' | 'background';

export interface Endpoint {
  method: 'GET' | 'POST';
  path: string;
  signed: boolean;
}

export interface CallOptions<T> {
  schema: z.ZodType<T>;
  /** JSON body; or rawBody for bytes made by the caller (usage batches hash them for their key) */
  body?: unknown;
  rawBody?: Buffer;
  query?: Record<string, string | number | undefined>;
  mode?: CallMode;
  idempotencyKey?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface CallResult<T> {
  data: T;
  requestId: string;
  attempts: number;
}

/** What the policy reads and moves; kept by CloudRuntime (cloud-state.ts) and persisted there. */
export interface PolicyState {
  /** the offset requests are signed with */
  offsetMs(): number;
  /** a token_expired answer told us the gateway's time (unsigned): sign with it, trust nothing else to it */
  resyncClock(serverTimeMs: number, localNowMs: number): void;
  breaker(): BreakerState;
  setBreaker(s: BreakerState): void;
  recordError(r: CloudErrorRecord): void;
}

export interface Timeouts {
  connectMs: number;
  interactiveMs: number;
  backgroundMs: number;
  maxAnswerBytes: number;
}
export const DEFAULT_TIMEOUTS: Timeouts = {
  connectMs: 5_000,
  interactiveMs: 20_000,
  backgroundMs: 30_000,
  maxAnswerBytes: 4 * 1024 * 1024,
};

export const MAX_ATTEMPTS = 3;
export const RETRY_BASE_MS = 500;
export const RETRY_CAP_MS = 5_000;
export const MAX_RETRY_AFTER_MS: Record<CallMode, number> = { interactive: 30_000, background: 60_000 };

export interface CloudHttpOptions {
  /** `{gateway_url}`; endpoints are under `{gateway_url}/gateway/v1/` */
  gatewayUrl: string;
  key: () => SigningKey | null;
  state: PolicyState;
  clock: Clock;
  log: Logger;
  transport?: Transport;
  timeouts?: Partial<Timeouts>;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const EMPTY = Buffer.alloc(0);

export class CloudHttp {
  private readonly transport: Transport;
  private readonly timeouts: Timeouts;
  private readonly base: string;
  private probing = false;

  constructor(private readonly o: CloudHttpOptions) {
    this.transport = o.transport ?? nodeTransport;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...o.timeouts };
    this.base = `${o.gatewayUrl.replace(/\/+$/, '')}${CLOUD_BASE_PATH}/`;
  }

  async call<T>(endpoint: Endpoint, opts: CallOptions<T>): Promise<CallResult<T>> {
    const mode = opts.mode ?? 'interactive';
    const requestId = uuidv7(this.o.clock.now());
    const gate = breakerGate(this.o.state.breaker(), this.o.clock.now());
    const probe = gate.pass && gate.probe;
    if (!gate.pass || (probe && this.probing)) {
      const until = gate.pass ? this.o.state.breaker().open_until! : gate.retryAt;
      const err = unavailable(
        `the cloud gateway failed repeatedly, so the client waits until ${new Date(until).toISOString()} before trying again`,
        requestId,
        {
          retryable: false,
          reason: 'breaker_open',
          retryAfterMs: Math.max(0, until - this.o.clock.now()),
        },
      );
      throw this.stopped(endpoint, err, 0, 'breaker_open');
    }
    if (probe) this.probing = true;
    const body = opts.rawBody ?? (opts.body === undefined ? EMPTY : Buffer.from(JSON.stringify(opts.body), 'utf8'));
    let attempts = 0;
    let resynced = false;
    const resync = (e: CloudClientError): boolean => {
      const at = Date.parse(String(e.info.details?.server_time ?? ''));
      if (resynced || !Number.isFinite(at)) return false;
      this.o.state.resyncClock(at, this.o.clock.now());
      this.o.log.warn('cloud: the gateway says our clock is off; re-synced the offset and signing again', {
        request_id: requestId,
        offset_ms: this.o.state.offsetMs(),
      });
      return (resynced = true);
    };
    try {
      const data = await retry(
        (attempt, signal) => ((attempts = attempt), this.once(endpoint, opts, body, requestId, attempt, mode, signal)),
        {
          attempts: MAX_ATTEMPTS,
          baseMs: RETRY_BASE_MS,
          capMs: RETRY_CAP_MS,
          jitter: 0.5,
          retryable: (e) => isCloudClientError(e) && e.info.retryable && (e.cloudCode !== 'token_expired' || resync(e)),
          retryAfterMs: (e) =>
            isCloudClientError(e) ? (e.cloudCode === 'token_expired' ? 0 : e.info.retryAfterMs) : undefined,
          maxRetryAfterMs: MAX_RETRY_AFTER_MS[mode],
          signal: opts.signal,
          random: this.o.random,
          sleep: this.o.sleep,
          now: () => this.o.clock.now(),
        },
      );
      if (this.o.state.breaker().trips > 0) this.o.state.setBreaker(CLOSED);
      return { data, requestId, attempts };
    } catch (e) {
      const err = isCloudClientError(e)
        ? e
        : unavailable(`unexpected failure: ${(e as Error).message ?? String(e)}`, requestId, {
            retryable: false,
            reason: 'client',
          });
      if (err.cloudCode === 'token_expired') resync(err);
      const stop = this.stopReason(err, attempts, mode, opts.signal);
      if (transient(err) && (stop === 'attempts_exhausted' || stop === 'retry_after_too_long')) {
        this.o.state.setBreaker(breakerTrip(this.o.state.breaker(), this.o.clock.now(), err.info.retryAfterMs ?? 0));
      } else if (!transient(err) && err.info.httpStatus !== null && this.o.state.breaker().trips > 0) {
        // The gateway answered (e.g. a 403): it is up, whatever it thinks of this request.
        this.o.state.setBreaker(CLOSED);
      }
      throw this.stopped(endpoint, err, attempts, stop);
    } finally {
      if (probe) this.probing = false;
    }
  }

  private async once<T>(
    endpoint: Endpoint,
    opts: CallOptions<T>,
    body: Buffer,
    requestId: string,
    attempt: number,
    mode: CallMode,
    signal?: AbortSignal,
  ): Promise<T> {
    const url = new URL(endpoint.path, this.base);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      Host: url.host,
      Accept: 'application/json',
      'User-Agent': `gatehouse/${VERSION}`,
      'X-Request-Id': requestId,
      'X-Attempt': String(attempt),
    };
    if (endpoint.method === 'POST') headers['Content-Type'] = 'application/json';
    if (opts.idempotencyKey) headers['Idempotency-Key'] = opts.idempotencyKey;
    if (endpoint.signed) {
      const key = this.o.key();
      if (!key)
        throw new CloudClientError(
          'invalid_site',
          'this service is not connected to a cloud gateway: connect it first (gatehouse cloud connect)',
          { requestId, httpStatus: null, retryable: false },
        );
      const created = Math.floor((this.o.clock.now() + this.o.state.offsetMs()) / 1000);
      Object.assign(headers, signRequest(key, { method: endpoint.method, url, body, created }));
    }
    let answer;
    try {
      answer = await this.transport({
        method: endpoint.method,
        url,
        headers,
        body,
        connectTimeoutMs: this.timeouts.connectMs,
        timeoutMs:
          opts.timeoutMs ?? (mode === 'interactive' ? this.timeouts.interactiveMs : this.timeouts.backgroundMs),
        maxAnswerBytes: this.timeouts.maxAnswerBytes,
        signal,
      });
    } catch (e) {
      const kind = e instanceof TransportError ? e.kind : 'network';
      throw unavailable(`could not reach the cloud gateway: ${(e as Error).message}`, requestId, {
        retryable: kind !== 'aborted' && kind !== 'too_large',
        reason: kind,
      });
    }
    const retryAfterMs = parseRetryAfter(answer.headers['retry-after'], this.o.clock.now());
    let json: unknown = null;
    try {
      json = answer.body.length ? JSON.parse(answer.body.toString('utf8')) : null;
    } catch {
      if (answer.status >= 200 && answer.status < 300)
        throw unavailable('the gateway answered something that is not JSON', requestId, {
          retryable: false,
          httpStatus: answer.status,
          reason: 'bad_answer',
        });
    }
    if (answer.status < 200 || answer.status >= 300) throw fromAnswer(answer.status, json, requestId, retryAfterMs);
    const parsed = opts.schema.safeParse(json);
    if (!parsed.success) {
      const where = parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.') || '(answer)'}: ${i.message}`)
        .join('; ');
      throw unavailable(`the gateway's answer to ${endpoint.path} does not match the contract (${where})`, requestId, {
        retryable: false,
        httpStatus: answer.status,
        reason: 'bad_answer',
      });
    }
    return parsed.data;
  }

  private stopReason(err: CloudClientError, attempts: number, mode: CallMode, signal?: AbortSignal): StopReason {
    if (signal?.aborted || err.info.details?.reason === 'aborted') return 'aborted';
    if (!err.info.retryable) return 'not_retryable';
    if (attempts >= MAX_ATTEMPTS) return 'attempts_exhausted';
    if ((err.info.retryAfterMs ?? 0) > MAX_RETRY_AFTER_MS[mode]) return 'retry_after_too_long';
    return 'not_retryable'; // token_expired a second time
  }

  private stopped(endpoint: Endpoint, err: CloudClientError, attempts: number, stopped: StopReason): CloudClientError {
    const out = new CloudClientError(err.cloudCode, err.message, { ...err.info, attempts, stopped });
    // Calls refused by the open breaker are not recorded: the breaker's state says it, and the error that opened it stays in view.
    if (stopped === 'breaker_open') return out;
    this.o.state.recordError({
      at: new Date(this.o.clock.now()).toISOString(),
      operation: endpoint.path,
      code: err.cloudCode,
      message: err.message,
      request_id: err.requestId ?? '',
      attempts,
      stopped,
      http_status: err.info.httpStatus,
    });
    this.o.log.warn(`cloud: ${endpoint.path} failed: ${err.message}`, {
      code: err.cloudCode,
      request_id: err.requestId,
      attempts,
      stopped,
    });
    return out;
  }
}

/** Failures that say the gateway (or the way to it) is not well: these trip the breaker. AI provider trouble does not. */
function transient(e: CloudClientError): boolean {
  return e.info.retryable && e.cloudCode !== 'token_expired' && e.cloudCode !== 'provider_unavailable';
}
