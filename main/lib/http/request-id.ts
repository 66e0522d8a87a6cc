import type { IncomingMessage, ServerResponse } from 'node:http';
import { uuidv7 } from '../ids.ts';

/** Letters, digits and `_ . : -`, at most 128: safe in a header, a log line and a file name. */
const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * The request's id: the client's `X-Request-Id` when it is safe to echo (so one
 * id follows a call across retries and services), else a new UUIDv7. Set on
 * the answer before anything else, so every refusal carries it too.
 */
export function requestId(req: IncomingMessage, res: ServerResponse, now: number = Date.now()): string {
  const sent = req.headers['x-request-id'];
  const id = typeof sent === 'string' && SAFE_REQUEST_ID.test(sent) ? sent : uuidv7(now);
  res.setHeader('X-Request-Id', id);
  return id;
}
