import type { IncomingMessage, ServerResponse } from 'node:http';
import { HTTP_STATUS, type ErrorCode, type Result } from '../contract/errors.ts';
import { isFailure } from '../mcp/http-failure.ts';
import { parseJson, readBody } from '../mcp/guards/body.ts';

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

/** A JSON request body (empty = `{}`), read with the same size bound as the MCP endpoint's. */
export async function readJsonBody(req: IncomingMessage, max = 1024 * 1024): Promise<{ ok: true; value: unknown } | { ok: false; code: ErrorCode; message: string }> {
  const body = await readBody(req, max);
  if (isFailure(body)) return { ok: false, code: body.code, message: body.message };
  if (body.length === 0) return { ok: true, value: {} };
  const parsed = parseJson(body);
  return isFailure(parsed) ? { ok: false, code: parsed.code, message: parsed.message } : { ok: true, value: parsed };
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i).trim()] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}
