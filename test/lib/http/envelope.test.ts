import { describe, expect, it } from 'vitest';
import { HttpError, httpError } from '../../../main/lib/http/http-error.ts';
import { adminEnvelope, cloudEnvelope, jsonRpcEnvelope } from '../../../main/lib/http/envelope.ts';
import { sendError } from '../../../main/lib/http/send.ts';
import { serve } from './serve.ts';

describe('HttpError', () => {
  it('takes its status from the contract table, or an explicit one', () => {
    expect(httpError('payload_too_large', 'big').status).toBe(413);
    expect(httpError('rate_limited', 'slow down').status).toBe(429);
    expect(new HttpError('invalid_request', 'no', { status: 405 }).status).toBe(405);
    // a code without a table entry is a client error, never a 5xx by accident
    expect(httpError('unknown_tool', 'x').status).toBe(400);
  });

  it('withHeaders adds headers without changing the original', () => {
    const e = httpError('rate_limited', 'x', { headers: { 'Retry-After': '3' } });
    const more = e.withHeaders({ 'RateLimit-Limit': '5' });
    expect(more.headers).toEqual({ 'Retry-After': '3', 'RateLimit-Limit': '5' });
    expect(e.headers).toEqual({ 'Retry-After': '3' });
    expect(more).toBeInstanceOf(HttpError);
  });
});

describe('envelopes: one refusal, three wire shapes', () => {
  const err = httpError('quota_exceeded', 'monthly AI tokens used up', {
    status: 429,
    details: { scope: 'site', limit: 10, used: 10 },
  });

  it('admin API: {ok:false, code, message, details}', () => {
    expect(adminEnvelope(err, { requestId: 'r1' })).toEqual({
      ok: false,
      code: 'quota_exceeded',
      message: 'monthly AI tokens used up',
      details: { scope: 'site', limit: 10, used: 10 },
    });
    expect(adminEnvelope(httpError('not_found', 'gone'), { requestId: 'r1' })).toEqual({
      ok: false,
      code: 'not_found',
      message: 'gone',
    });
  });

  it('MCP endpoint: JSON-RPC error with data {code, request_id} and the code of the status table', () => {
    expect(jsonRpcEnvelope(httpError('unauthorized', 'who?'), { requestId: 'r2', rpcId: 7 })).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32001, message: 'who?', data: { code: 'unauthorized', request_id: 'r2' } },
    });
    const parse = jsonRpcEnvelope(httpError('parse_error', 'bad'), { requestId: 'r3' }) as {
      id: unknown;
      error: { code: number };
    };
    expect(parse.id).toBeNull();
    expect(parse.error.code).toBe(-32700);
    // codes outside the table become Invalid Request
    expect(
      (jsonRpcEnvelope(httpError('service_unavailable', 'busy'), { requestId: 'r' }) as { error: { code: number } })
        .error.code,
    ).toBe(-32600);
  });

  it('cloud: {success:false, error:{code, message, request_id, retryable, ...details}}', () => {
    expect(cloudEnvelope(err, { requestId: 'r4' })).toEqual({
      success: false,
      error: {
        code: 'quota_exceeded',
        message: 'monthly AI tokens used up',
        request_id: 'r4',
        retryable: false,
        scope: 'site',
        limit: 10,
        used: 10,
      },
    });
    const retryable = (e: HttpError) =>
      (cloudEnvelope(e, { requestId: 'r' }) as { error: { retryable: boolean } }).error.retryable;
    expect(retryable(httpError('rate_limited', 'x'))).toBe(true);
    expect(retryable(httpError('gateway_unavailable', 'x', { status: 503 }))).toBe(true);
    expect(retryable(httpError('internal_error', 'x'))).toBe(true);
    expect(retryable(httpError('signature_invalid', 'x', { status: 401 }))).toBe(false);
    expect(retryable(httpError('provider_unavailable', 'x', { status: 503, details: { retryable: false } }))).toBe(
      false,
    );
  });

  it('cloud: a detail never replaces code or message, and __proto__ stays a plain field', () => {
    const details = JSON.parse(
      '{"code":"forged","message":"forged","__proto__":{"polluted":true},"required_plan":"pro"}',
    ) as Record<string, unknown>;
    const body = cloudEnvelope(httpError('entitlement_required', 'needs pro', { status: 403, details }), {
      requestId: 'r5',
    }) as { error: Record<string, unknown> };
    expect(body.error.code).toBe('entitlement_required');
    expect(body.error.message).toBe('needs pro');
    expect(body.error.required_plan).toBe('pro');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(body)).error.__proto__).toEqual({ polluted: true });
  });
});

describe('sendError', () => {
  it('answers the status, headers and envelope over real HTTP', async () => {
    const srv = await serve((_req, res) =>
      sendError(res, httpError('rate_limited', 'wait', { headers: { 'Retry-After': '2' } }), cloudEnvelope, {
        requestId: 'abc',
      }),
    );
    try {
      const res = await fetch(srv.url);
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({
        success: false,
        error: { code: 'rate_limited', message: 'wait', request_id: 'abc', retryable: true },
      });
    } finally {
      await srv.close();
    }
  });

  it('cuts the connection when the answer has already started', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: 1\n\n');
      sendError(res, httpError('internal_error', 'late'), adminEnvelope, { requestId: 'x' });
    });
    try {
      // no second status line: the client sees a cut connection, never a complete answer
      const outcome = await fetch(srv.url)
        .then((r) => r.text())
        .then(
          () => 'complete',
          () => 'cut',
        );
      expect(outcome).toBe('cut');
    } finally {
      await srv.close();
    }
  });
});
