import type { IncomingMessage } from 'node:http';
import { CredentialError } from './credentials.ts';
import {
  type ClientMessage,
  errorResponse,
  IDEMPOTENT,
  idKey,
  type JsonRpcId,
  peekServerMessage,
  readClientMessage,
} from './envelope.ts';
import * as fail from './failures.ts';
import { forwardBody, forwardSse, mediaType } from './forward.ts';
import { NetworkError, readBody } from './http-side.ts';
import { Aborted, type Link, Unreachable } from './link.ts';
import { MessageTooLarge } from './message-limit.ts';
import { sleep } from '../main/lib/retry.ts';
import type { BridgeLogger } from './log.ts';
import { requestDone } from './memory.ts';
import { modernHeaders } from './protocol-headers.ts';
import { MAX_TRANSIENT_RETRIES, readRefusal, transientRetries } from './refusal.ts';
import { isSessionGone, POST_HEADERS, Session } from './session.ts';
import type { LineWriter } from './stdio-side.ts';

/**
 * The pump between the two sides. Client lines become POSTs; whatever the
 * server streams back becomes client lines. It reads only the id and method
 * of client messages, to track requests in flight (for cancellation, retries
 * and initialize replay) and to decide what is safe to send twice.
 */

interface Flight {
  id: JsonRpcId;
  key: string;
  method: string;
  ctrl: AbortController;
  cancelled: boolean;
  /** a 2026-07-28 request: closing its stream is the cancellation, there is no session to post a notification to */
  modern: boolean;
  /** When the last message on this request's stream that was not its response went out. */
  lastNoteAt: number;
}

// See deliver(): how long a response waits behind a notification that went out just before it.
const RESPONSE_GAP_MS = 10;

const ERROR_BODY_LIMIT = 64 * 1024;

export class Pump {
  private readonly flights = new Map<string, Flight>();
  private readonly life = new AbortController();
  private readonly announced = new Set<string>();
  private closed = false;
  private readonly session: Session;

  constructor(
    private readonly link: Link,
    private readonly out: LineWriter,
    private readonly log: BridgeLogger,
    private readonly hasCredential: boolean,
  ) {
    this.session = new Session(link, log, (data) => out.write(data), this.life.signal);
  }

  get inFlight(): number {
    return this.flights.size;
  }

  onLine(line: Buffer): void {
    if (this.closed) return;
    const msg = readClientMessage(line);
    if (!msg) {
      this.log.warn('the client sent a line that is not a JSON-RPC message; answered with a parse error');
      this.out.write(errorResponse(null, -32700, 'Parse error: not a JSON-RPC message'));
      return;
    }
    if (msg.kind === 'request') void this.request(msg, line);
    else if (msg.kind === 'notification') void this.notification(msg, line);
    // A response is the client's answer to a server request (sampling, elicitation, roots).
    else void this.post(msg, line);
  }

  private async request(msg: ClientMessage, body: Buffer): Promise<void> {
    const flight: Flight = {
      id: msg.id!,
      key: idKey(msg.id),
      method: msg.method!,
      ctrl: new AbortController(),
      cancelled: false,
      lastNoteAt: 0,
      modern: modernHeaders(msg) !== undefined,
    };
    this.flights.set(flight.key, flight);
    if (flight.method === 'initialize') this.session.beginInitialize(body);
    try {
      await this.exchange(flight, msg, body);
    } catch (e) {
      if (flight.cancelled || this.closed) return;
      if (e instanceof CredentialError) {
        // The bridge is about to exit 3; the client gets the reason too, not a dead pipe.
        await this.fail(flight, { code: 'unauthorized', message: e.message });
        return;
      }
      this.log.error('unexpected failure while forwarding a request', {
        method: flight.method,
        reason: e instanceof Error ? e.message : String(e),
      });
      await this.fail(flight, fail.internal());
    } finally {
      this.flights.delete(flight.key);
      requestDone();
    }
  }

  private async exchange(flight: Flight, msg: ClientMessage, body: Buffer): Promise<void> {
    const { method } = flight;
    const signal = flight.ctrl.signal;
    const deadline = Date.now() + this.link.connectTimeoutMs;
    let renewed = false;
    const retries = transientRetries();

    for (;;) {
      await this.session.ready();
      if (signal.aborted) return;
      const initializing = method === 'initialize';
      const sid = initializing ? undefined : this.session.id;
      const headers = { ...POST_HEADERS, ...(initializing ? {} : this.session.headers()), ...modernHeaders(msg) };

      let res: IncomingMessage;
      try {
        res = await this.link.send('POST', headers, body, signal, deadline);
      } catch (e) {
        if (e instanceof Aborted || signal.aborted) return;
        if (e instanceof Unreachable) return this.fail(flight, e.failure ?? fail.unreachable(e.reason, e.waitedMs));
        if (e instanceof NetworkError) {
          // The request may have reached a handler: only what is harmless twice goes again.
          if (IDEMPOTENT.has(method) && retries.count < MAX_TRANSIENT_RETRIES) {
            this.log.debug('connection failed; retrying', { method, reason: e.message });
            await sleep(retries.backoff(), signal);
            continue;
          }
          return this.fail(flight, fail.connectionLost(method));
        }
        throw e;
      }

      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300 && status !== 202) {
        if (initializing) this.session.noteInitializeHeaders(res);
        const end = await forwardBody(res, (data) => this.deliver(flight, data)).catch((e: Error) => e);
        if (end instanceof MessageTooLarge) return this.fail(flight, fail.messageTooLarge(end.message));
        if (end instanceof Error) return this.fail(flight, fail.httpError(status, end.message));
        if (end.sawResponse || flight.cancelled || this.closed) return;
        // The stream ended without the answer: resume it where the server supports that, else retry what is safe.
        if (
          end.lastEventId !== undefined &&
          this.session.id !== undefined &&
          (await this.resume(flight, end.lastEventId))
        )
          return;
        if (signal.aborted) return;
        if (IDEMPOTENT.has(method) && retries.count < MAX_TRANSIENT_RETRIES) {
          await sleep(retries.backoff(), signal);
          continue;
        }
        return this.fail(flight, fail.connectionLost(method));
      }
      if (status === 202) {
        res.resume();
        return;
      }

      const errBody = await readBody(res, ERROR_BODY_LIMIT).catch(() => Buffer.alloc(0));
      const next = readRefusal(status, res.headers, errBody, {
        method,
        id: flight.id,
        idempotent: IDEMPOTENT.has(method),
        onSession: sid !== undefined,
        renewed,
        hasCredential: this.hasCredential,
        retries,
      });
      if (next.then === 'answer') return void this.out.write(next.line);
      if (next.then === 'fail') return this.fail(flight, next.failure);
      if (next.then === 'retry') {
        if (next.note) this.log.info(next.note, { method });
        await sleep(next.waitMs, signal);
        continue;
      }
      renewed = true;
      try {
        await this.session.renew(sid!);
      } catch (e) {
        return this.fail(flight, fail.sessionLost(e instanceof Error ? e.message : String(e)));
      }
    }
  }

  /** Writes a server message for `flight`'s stream; true when it is the awaited response. */
  private deliver(flight: Flight, data: Buffer): boolean {
    const peek = peekServerMessage(data);
    // Not JSON-RPC at all: pass it on for the client to reject, but it is no notification either.
    if (!peek.isResponse && !peek.parsed) {
      if (!flight.cancelled) this.out.write(data);
      return false;
    }
    let isResponse = peek.isResponse;
    if (isResponse && peek.parsed && idKey(peek.parsed.id) !== flight.key) isResponse = false;
    if (isResponse && flight.method === 'initialize') this.session.noteInitializeResult(peek.parsed);
    if (flight.cancelled) return isResponse;
    const now = performance.now();
    if (!isResponse) {
      flight.lastNoteAt = now;
      this.out.write(data);
    } else if (now - flight.lastNoteAt < RESPONSE_GAP_MS) {
      // The SDK client handles a notification a microtask later than a response read
      // in the same stdin chunk, and forgets a request's progress handler once its
      // response is in: a progress notification followed at once by the result would
      // be dropped (modelcontextprotocol/typescript-sdk#2580). Some milliseconds apart,
      // they arrive in separate reads unless the client is very busy.
      setTimeout(() => this.out.write(data), RESPONSE_GAP_MS);
    } else {
      this.out.write(data);
    }
    return isResponse;
  }

  /** GET with Last-Event-ID: the server replays what the cut-off stream missed. True when the flight is answered (or failed for good). */
  private async resume(flight: Flight, lastEventId: string): Promise<boolean> {
    for (let attempt = 0; attempt < 2 && !flight.ctrl.signal.aborted; attempt++) {
      try {
        const res = await this.link.send(
          'GET',
          { accept: 'text/event-stream', 'last-event-id': lastEventId, ...this.session.headers() },
          undefined,
          flight.ctrl.signal,
        );
        if (res.statusCode !== 200 || mediaType(res) !== 'text/event-stream') {
          res.resume();
          return false;
        }
        const end = await forwardSse(res, (data) => this.deliver(flight, data));
        if (end.sawResponse) return true;
        if (end.lastEventId !== undefined) lastEventId = end.lastEventId;
      } catch (e) {
        // The resumed answer is past the bound: fetching it again (a retry) would cost the same 64 MiB.
        if (e instanceof MessageTooLarge) {
          await this.fail(flight, fail.messageTooLarge(e.message));
          return true;
        }
        return false;
      }
    }
    return false;
  }

  private async notification(msg: ClientMessage, body: Buffer): Promise<void> {
    if (msg.method === 'notifications/cancelled') {
      const target = this.flights.get(idKey(msg.params?.requestId));
      // A 2026-07-28 server has no session to take the notification (it answers "Missing session ID"):
      // aborting the request's HTTP exchange below is the cancellation it understands.
      const sent = target?.modern ? Promise.resolve(true) : this.post(msg, body);
      if (target) {
        target.cancelled = true;
        target.ctrl.abort();
        this.log.debug('request cancelled by the client', { method: target.method });
      }
      await sent;
      return;
    }
    const ok = await this.post(msg, body);
    if (ok && msg.method === 'notifications/initialized') this.session.listen();
  }

  /** POSTs a notification or a response; the server answers 202 with no body. */
  private async post(msg: ClientMessage, body: Buffer, again = false): Promise<boolean> {
    await this.session.ready();
    const sid = this.session.id;
    const headers = { ...POST_HEADERS, ...this.session.headers(), ...modernHeaders(msg) };
    let res: IncomingMessage;
    try {
      res = await this.link.send('POST', headers, body, this.life.signal, Date.now() + this.link.connectTimeoutMs);
    } catch (e) {
      if (!this.closed)
        this.log.warn('could not deliver a client message', {
          what: msg.method ?? 'response',
          reason: e instanceof Error ? e.message : String(e),
        });
      return false;
    }
    const status = res.statusCode ?? 0;
    if (status < 300) {
      res.resume();
      return true;
    }
    const said = fail.serverMessage(await readBody(res, ERROR_BODY_LIMIT).catch(() => Buffer.alloc(0)));
    // A notification for the old session still makes sense in the new one; an answer to the old session's request does not.
    if (
      !again &&
      sid !== undefined &&
      msg.kind === 'notification' &&
      msg.method !== 'notifications/cancelled' &&
      isSessionGone(status, said.text)
    ) {
      const renewedOk = await this.session.renew(sid).then(
        () => true,
        () => false,
      );
      return renewedOk && this.post(msg, body, true);
    }
    this.log.warn(`the server refused a client ${msg.kind}`, {
      what: msg.method ?? 'response',
      status,
      said: said.text,
    });
    return false;
  }

  private async fail(flight: Flight, failure: fail.Failure): Promise<void> {
    if (flight.cancelled || this.closed) return;
    const message = this.log.redactor.apply(failure.message);
    if (failure.announce) {
      if (!this.announced.has(failure.code)) {
        this.announced.add(failure.code);
        this.log.error(message);
      }
    } else {
      this.log.warn(`${flight.method} failed: ${message}`);
    }
    const code = await fail.jsonRpcCode(failure.code);
    const data: Record<string, unknown> = { code: failure.code };
    if (failure.httpStatus) data.http_status = failure.httpStatus;
    this.out.write(errorResponse(flight.id, code, message, data));
  }

  /** stdin closed or a signal: abort what is in flight and end the session. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const f of this.flights.values()) {
      f.cancelled = true;
      f.ctrl.abort();
    }
    this.life.abort();
    await this.session.close();
  }
}
