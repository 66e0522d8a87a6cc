import type { ServerResponse } from 'node:http';
import type { HttpError } from './http-error.ts';
import type { Envelope, ErrorMeta } from './envelope.ts';

const JSON_HEADERS = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
} as const;

/** One JSON answer with a known length; never cached, never sniffed. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * Answers a refusal in the caller's envelope. When the answer has already
 * started (a stream), the connection is cut instead: a second status line
 * cannot be sent.
 */
export function sendError(res: ServerResponse, err: HttpError, envelope: Envelope, meta: ErrorMeta): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, err.status, envelope(err, meta), err.headers);
}
