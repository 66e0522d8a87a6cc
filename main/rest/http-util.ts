import type { IncomingMessage, ServerResponse } from 'node:http';
import { HTTP_STATUS, type ErrorCode, type Result } from '../contract/errors.ts';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...headers });
  res.end(text);
}

export function sendResult(res: ServerResponse, result: Result<unknown>): void {
  sendJson(res, result.ok ? 200 : (HTTP_STATUS[result.code] ?? 400), result);
}

export function sendError(res: ServerResponse, code: ErrorCode, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, HTTP_STATUS[code] ?? 400, { ok: false, code, message }, headers);
}

export async function readJsonBody(req: IncomingMessage, max = 1024 * 1024): Promise<{ ok: true; value: unknown } | { ok: false; code: ErrorCode; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > max) return { ok: false, code: 'payload_too_large', message: 'request body too large' };
    chunks.push(c);
  }
  if (size === 0) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false, code: 'parse_error', message: 'request body is not valid JSON' };
  }
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i).trim()] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}
