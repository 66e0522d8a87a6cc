import type { IncomingMessage } from 'node:http';
import { readBody } from './http-side.ts';
import { MAX_MESSAGE_BYTES, MessageTooLarge } from './message-limit.ts';
import { SseParser } from './sse.ts';

/**
 * Server bytes to client lines. An SSE event's data or a JSON body is written
 * as it arrived; only JSON that spans lines (pretty-printed, multi-line SSE
 * data) or a batch array is parsed, to fit stdio's one-message-per-line rule.
 */

/** Called per server message; returns true when it was the response the stream was waiting for. */
export type OnServerMessage = (data: Buffer) => boolean;

export interface StreamEnd {
  sawResponse: boolean;
  /** The body ended normally (false: cut off or aborted). */
  complete: boolean;
  lastEventId: string | undefined;
  retryMs: number | undefined;
}

export class UnexpectedContent extends Error {
  override name = 'UnexpectedContent';
}

export function mediaType(res: IncomingMessage): string {
  return (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export function forwardBody(res: IncomingMessage, onMessage: OnServerMessage): Promise<StreamEnd> {
  const type = mediaType(res);
  if (type === 'text/event-stream') return forwardSse(res, onMessage);
  if (type === 'application/json') return forwardJson(res, onMessage);
  res.resume();
  return Promise.reject(new UnexpectedContent(`unexpected content type "${type || 'none'}" from the server`));
}

export function forwardSse(res: IncomingMessage, onMessage: OnServerMessage): Promise<StreamEnd> {
  let sawResponse = false;
  const parser = new SseParser((ev) => {
    if (ev.event !== undefined && ev.event !== 'message') return;
    for (const msg of ev.multiLine ? relines(ev.data) : [ev.data]) if (onMessage(msg)) sawResponse = true;
  });
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (complete: boolean) => {
      if (settled) return;
      settled = true;
      resolve({ sawResponse, complete, lastEventId: parser.lastEventId, retryMs: parser.retryMs });
    };
    res.on('data', (chunk: Buffer) => {
      if (settled) return;
      try {
        parser.push(chunk);
      } catch (e) {
        // Only the bound ends the stream as an answer; a bug in delivering a message stays a bug (it was never the server's).
        if (!(e instanceof MessageTooLarge)) throw e;
        settled = true;
        res.destroy();
        reject(e);
      }
    });
    res.on('end', () => finish(true));
    res.on('error', () => finish(false));
    res.on('close', () => finish(res.complete));
  });
}

async function forwardJson(res: IncomingMessage, onMessage: OnServerMessage): Promise<StreamEnd> {
  let body: Buffer;
  try {
    body = await readBody(res, MAX_MESSAGE_BYTES, () => new MessageTooLarge(MAX_MESSAGE_BYTES));
  } catch (e) {
    if (e instanceof MessageTooLarge) throw e;
    return { sawResponse: false, complete: false, lastEventId: undefined, retryMs: undefined };
  }
  let sawResponse = false;
  for (const msg of needsRelining(body) ? relines(body) : [body]) if (onMessage(msg)) sawResponse = true;
  return { sawResponse, complete: true, lastEventId: undefined, retryMs: undefined };
}

const LF = 0x0a;
const CR = 0x0d;
const OPEN_BRACKET = 0x5b;

function needsRelining(body: Buffer): boolean {
  if (body.indexOf(LF) !== -1 || body.indexOf(CR) !== -1) return true;
  for (const b of body) {
    if (b === 0x20 || b === 0x09) continue;
    return b === OPEN_BRACKET;
  }
  return false;
}

/** One compact line per message; a batch array becomes its members. Invalid JSON is passed on as one line for the client to reject. */
function relines(data: Buffer): Buffer[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch {
    return [Buffer.from(data.toString('utf8').replace(/[\r\n]+/g, ' '))];
  }
  return (Array.isArray(parsed) ? parsed : [parsed]).map((m) => Buffer.from(JSON.stringify(m)));
}
