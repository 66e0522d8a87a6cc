import type { IncomingMessage } from 'node:http';
import { peekServerMessage } from './envelope.ts';
import { forwardBody, forwardSse, mediaType } from './forward.ts';
import { MessageTooLarge } from './message-limit.ts';
import { readBody } from './http-side.ts';
import type { Link } from './link.ts';
import { backoffDelay, sleep } from '../main/lib/retry.ts';
import type { BridgeLogger } from './log.ts';

/**
 * The HTTP session as the spec describes it: the `Mcp-Session-Id` the server
 * hands out on initialize, the negotiated `MCP-Protocol-Version`, the GET
 * stream for server-initiated messages, DELETE on the way out, and renewal
 * (replaying the client's initialize) when the server forgets the session.
 */

const INITIALIZED = Buffer.from('{"jsonrpc":"2.0","method":"notifications/initialized"}');
export const POST_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
} as const;

export class Session {
  id: string | undefined;
  protocolVersion: string | undefined;
  private initBody: Buffer | undefined;
  private renewing: Promise<void> | undefined;
  private listening: AbortController | undefined;
  private closed = false;

  constructor(
    private readonly link: Link,
    private readonly log: BridgeLogger,
    /** Writes a server message to the client. */
    private readonly deliver: (data: Buffer) => void,
    private readonly life: AbortSignal,
  ) {}

  /** Resolves when no renewal is in progress, so requests carry the current session id. */
  ready(): Promise<void> | undefined {
    return this.renewing?.catch(() => undefined);
  }

  headers(): Record<string, string> {
    const h: Record<string, string> = {};
    if (this.id !== undefined) h['mcp-session-id'] = this.id;
    if (this.protocolVersion !== undefined) h['mcp-protocol-version'] = this.protocolVersion;
    return h;
  }

  /** The client starts (again): forget the old session, keep the bytes to replay later. */
  beginInitialize(body: Buffer): void {
    this.initBody = body;
    this.id = undefined;
    this.protocolVersion = undefined;
    this.stopListening();
  }

  noteInitializeHeaders(res: IncomingMessage): void {
    const sid = res.headers['mcp-session-id'];
    this.id = typeof sid === 'string' && sid !== '' ? sid : undefined;
  }

  noteInitializeResult(parsed: Record<string, unknown> | undefined): void {
    const result = parsed?.result as { protocolVersion?: unknown } | undefined;
    if (typeof result?.protocolVersion === 'string') this.protocolVersion = result.protocolVersion;
  }

  /** The server said `expired` is unknown: start a new session unless another caller already did. */
  renew(expired: string): Promise<void> {
    if (this.renewing) return this.renewing;
    if (this.id !== expired) return Promise.resolve();
    this.renewing = this.replayInitialize().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async replayInitialize(): Promise<void> {
    const old = this.id;
    this.stopListening();
    this.id = undefined;
    const knownVersion = this.protocolVersion;
    this.protocolVersion = undefined;
    if (!this.initBody) throw new Error('the client never sent initialize, so there is nothing to replay');
    this.log.info("the server no longer knows the session: starting a new one by replaying the client's initialize", {
      old_session: old,
    });

    const deadline = Date.now() + this.link.connectTimeoutMs;
    const res = await this.link.send('POST', { ...POST_HEADERS }, this.initBody, this.life, deadline);
    if (res.statusCode !== 200) {
      await readBody(res, 4096).catch(() => undefined);
      throw new Error(`initialize was answered with HTTP ${res.statusCode}`);
    }
    this.noteInitializeHeaders(res);
    let answer: Record<string, unknown> | undefined;
    // The replayed answer is for the bridge only: the client already has one. Anything else the server says meanwhile goes through.
    await forwardBody(res, (data) => {
      const peek = peekServerMessage(data);
      if (peek.isResponse) {
        answer = peek.parsed;
        return true;
      }
      this.deliver(data);
      return false;
    });
    if (!answer || 'error' in answer) throw new Error('the server refused the replayed initialize');
    this.noteInitializeResult(answer);
    if (knownVersion && this.protocolVersion !== knownVersion) {
      this.log.warn('the new session negotiated another protocol version than the client knows', {
        was: knownVersion,
        now: this.protocolVersion,
      });
    }
    const ack = await this.link.send('POST', { ...POST_HEADERS, ...this.headers() }, INITIALIZED, this.life, deadline);
    ack.resume();
    this.log.info('new session ready', { session: this.id });
    this.listen();
  }

  /** Opens the GET stream for server-initiated messages (a 405 means the server offers none). */
  listen(): void {
    if (this.listening || this.closed) return;
    const ctrl = new AbortController();
    this.listening = ctrl;
    void this.keepListening(ctrl);
  }

  private stopListening(): void {
    this.listening?.abort();
    this.listening = undefined;
  }

  private async keepListening(ctrl: AbortController): Promise<void> {
    const signal = AbortSignal.any([ctrl.signal, this.life]);
    let failures = 0;
    let lastEventId: string | undefined;
    const pause = (retryMs?: number) => sleep(retryMs ?? backoffDelay(++failures, 1000, 30_000), signal);
    while (!signal.aborted) {
      const sid = this.id;
      const headers: Record<string, string> = { accept: 'text/event-stream', ...this.headers() };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      let res: IncomingMessage;
      try {
        res = await this.link.send('GET', headers, undefined, signal);
      } catch {
        if (signal.aborted) return;
        await pause();
        continue;
      }
      const status = res.statusCode ?? 0;
      if (status === 405) {
        res.resume();
        this.log.debug('the server offers no GET stream (405)');
        return;
      }
      if (status !== 200 || mediaType(res) !== 'text/event-stream') {
        const said = (await readBody(res, 4096).catch(() => Buffer.alloc(0))).toString('utf8');
        if (sid !== undefined && isSessionGone(status, said)) {
          if (this.listening === ctrl) this.listening = undefined;
          // renew() opens a new stream when it is done.
          this.renew(sid).catch((e: unknown) =>
            this.log.warn('could not start a new session', { reason: e instanceof Error ? e.message : String(e) }),
          );
          return;
        }
        this.log.debug('GET stream refused', { status });
        await pause();
        continue;
      }
      const end = await forwardSse(res, (data) => {
        this.deliver(data);
        return false;
      }).catch((e: unknown) => {
        // A message past the bridge's bound: the stream was closed; reopening it backs off like a failure,
        // after the last whole event (so what was delivered is not replayed).
        if (e instanceof MessageTooLarge && e.lastEventId !== undefined) lastEventId = e.lastEventId;
        this.log.warn("the server's notification stream was closed", {
          reason: e instanceof Error ? e.message : String(e),
        });
        return undefined;
      });
      if (signal.aborted) return;
      if (!end) {
        await pause();
        continue;
      }
      failures = 0;
      lastEventId = end.lastEventId ?? lastEventId;
      await pause(end.retryMs);
    }
  }

  /** Ends the session: stop listening and DELETE it where the server uses sessions (405 is fine). */
  async close(): Promise<void> {
    this.closed = true;
    this.stopListening();
    if (this.id === undefined) return;
    const headers = this.headers();
    this.id = undefined;
    try {
      const res = await this.link.send('DELETE', headers, undefined, AbortSignal.timeout(1000));
      res.resume();
      this.log.debug('session closed', { status: res.statusCode });
    } catch {
      // The server is gone or slow; exiting matters more.
    }
  }
}

/** 404 is the spec's answer for an unknown session; some servers answer 400 naming the session instead. */
export function isSessionGone(status: number, said: string | undefined): boolean {
  return status === 404 || (status === 400 && /session/i.test(said ?? ''));
}
