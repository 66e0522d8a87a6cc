import type { ServerResponse } from 'node:http';
import { HTTP_STATUS, JSONRPC_CODES, type ErrorCode } from '../contract/errors.ts';

/** A refusal the HTTP layer answers itself, before the SDK sees the request. */
export class HttpFailure {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
    readonly headers: Record<string, string> = {},
    readonly status?: number,
  ) {}
}

export const fail = (code: ErrorCode, message: string, headers?: Record<string, string>): HttpFailure => new HttpFailure(code, message, headers);
export const isFailure = (v: unknown): v is HttpFailure => v instanceof HttpFailure;

/** JSON-RPC error body with `data: {code, request_id}` and the status of DESIGN.md's table. */
export function sendFailure(res: ServerResponse, f: HttpFailure, requestId: string, rpcId: string | number | null = null): void {
  const status = f.status ?? HTTP_STATUS[f.code] ?? 400;
  const rpcCode = (JSONRPC_CODES as Partial<Record<ErrorCode, number>>)[f.code] ?? -32600;
  const body = JSON.stringify({ jsonrpc: '2.0', id: rpcId, error: { code: rpcCode, message: f.message, data: { code: f.code, request_id: requestId } } });
  res.writeHead(status, {
    ...f.headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}
