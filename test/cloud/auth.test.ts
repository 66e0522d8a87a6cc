import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, register, type SiteClient } from './helpers/client.ts';
import { signHeaders } from './helpers/sign.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';

let h: Harness;
let site: SiteClient;

beforeAll(async () => {
  h = await startHarness();
  site = await register(h.gateway);
}, 180_000);
afterAll(() => h?.stop());

const expectError = (
  r: {
    status: number;
    body: { success: boolean; error: { code: string; request_id: string; retryable: boolean } };
    headers: Record<string, unknown>;
  },
  status: number,
  code: string,
) => {
  expect(r.body.success).toBe(false);
  expect(r.body.error.code).toBe(code);
  expect(r.status).toBe(status);
  expect(r.body.error.request_id).toBe(r.headers['x-request-id']);
};

describe('signed requests (docs/cloud-gateway.md "Request signing")', () => {
  it('accepts a properly signed GET and POST, with a request id on the answer', async () => {
    const r = await site.get('sites/status');
    expect(r.status).toBe(200);
    expect(r.body.site.site_id).toBe(site.creds.site_id);
    expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const p = await site.post('sites/sync', { version: '1.2.3', products_in_use: ['mcp'], outbox_depth: 4 });
    expect(p.status).toBe(200);
    expect(p.body.site).toMatchObject({ version: '1.2.3', products_in_use: ['mcp'], outbox_depth: 4 });
  });

  it('echoes a client X-Request-Id', async () => {
    const r = await site.get('sites/status', { headers: { 'X-Request-Id': 'req-123.abc' } });
    expect(r.headers['x-request-id']).toBe('req-123.abc');
  });

  it('refuses an unsigned call', async () => {
    expectError(await rawRequest(`${h.gateway}/sites/status`, 'GET', {}), 401, 'signature_invalid');
  });

  it('refuses a tampered body (digest no longer matches)', async () => {
    const r = await site.post(
      'sites/sync',
      { version: '1.0.0' },
      { tamper: { body: JSON.stringify({ version: '6.6.6' }) } },
    );
    expectError(r, 401, 'signature_invalid');
    expect(r.body.error.message).toMatch(/Content-Digest/);
  });

  it('refuses a body whose digest was recomputed by someone without the secret', async () => {
    const url = `${h.gateway}/sites/sync`;
    const signed = signHeaders(site.creds, { method: 'POST', url, body: '{"version":"1.0.0"}' });
    const forged = '{"version":"6.6.6"}';
    const digest = signHeaders(site.creds, { method: 'POST', url, body: forged })['Content-Digest']!;
    expectError(
      await rawRequest(url, 'POST', { ...signed, 'Content-Digest': digest }, forged),
      401,
      'signature_invalid',
    );
  });

  it('refuses a tampered query', async () => {
    expectError(
      await site.get('usage/history', { query: 'period=day', tamper: { query: 'period=month' } }),
      401,
      'signature_invalid',
    );
  });

  it('refuses a tampered method and path', async () => {
    const url = `${h.gateway}/license/status`;
    const signed = signHeaders(site.creds, { method: 'GET', url });
    expectError(await rawRequest(`${h.gateway}/entitlements`, 'GET', signed), 401, 'signature_invalid');
  });

  it('refuses a replayed nonce, and only once used', async () => {
    const nonce = 'bm9uY2Utbm9uY2Utbm9uYw';
    expect((await site.get('sites/status', { nonce })).status).toBe(200);
    expectError(await site.get('sites/status', { nonce }), 401, 'signature_invalid');
    // the same nonce under another key is another nonce
    const other = await register(h.gateway);
    expect((await other.get('sites/status', { nonce })).status).toBe(200);
  });

  it('answers token_expired with server_time beyond the ±300 s window, in both directions', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const created of [now - 301 - 5, now + 301 + 5]) {
      const r = await site.get('sites/status', { created });
      expectError(r, 401, 'token_expired');
      expect(Math.abs(Date.parse(r.body.error.server_time) - Date.now())).toBeLessThan(60_000);
      expect(r.body.error.retryable).toBe(true);
    }
    expect((await site.get('sites/status', { created: now - 250 })).status).toBe(200);
  });

  it('answers invalid_site 401 for an unknown key id', async () => {
    const r = await rawRequest(
      `${h.gateway}/sites/status`,
      'GET',
      signHeaders({ key_id: 'key_nobody', secret: 'x' }, { method: 'GET', url: `${h.gateway}/sites/status` }),
    );
    expectError(r, 401, 'invalid_site');
  });

  it('refuses a wrong secret', async () => {
    const url = `${h.gateway}/sites/status`;
    expectError(
      await rawRequest(
        url,
        'GET',
        signHeaders({ key_id: site.creds.key_id, secret: 'not-the-secret' }, { method: 'GET', url }),
      ),
      401,
      'signature_invalid',
    );
  });

  it("a disconnected site's key stops working at once: invalid_site 403", async () => {
    const s = await register(h.gateway);
    expect((await s.get('sites/status')).status).toBe(200);
    const d = await s.post('sites/disconnect');
    expect(d.body).toEqual({ success: true, site_id: s.creds.site_id, status: 'disconnected' });
    expectError(await s.get('sites/status'), 403, 'invalid_site');
    expectError(await s.post('sites/disconnect'), 403, 'invalid_site');
  });

  it('answers unknown paths 404 and wrong methods 405 with Allow, in the envelope', async () => {
    expectError(await rawRequest(`${h.gateway}/nothing`, 'GET', {}), 404, 'not_found');
    const r = await rawRequest(`${h.gateway}/entitlements/check`, 'GET', {});
    expectError(r, 405, 'invalid_request');
    expect(r.headers.allow).toBe('POST');
  });

  it('refuses bad JSON and deep nesting as 400 after a valid signature', async () => {
    expectError(await site.call('POST', 'entitlements/check', { rawBody: '{"feature":' }), 400, 'parse_error');
    expectError(
      await site.call('POST', 'entitlements/check', { rawBody: '['.repeat(200) + ']'.repeat(200) }),
      400,
      'parse_error',
    );
  });

  it('refuses a body over the limit with 413', async () => {
    expectError(
      await site.call('POST', 'usage/record', { rawBody: `{"events":["${'x'.repeat(300 * 1024)}"]}` }),
      413,
      'payload_too_large',
    );
  });

  it('answers health and keys unsigned', async () => {
    const r = await rawRequest(`${h.gateway}/health`, 'GET', {});
    expect(r.body).toMatchObject({ success: true, status: 'ok' });
    const k = await rawRequest(`${h.gateway}/keys`, 'GET', {});
    expect(k.body.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', use: 'sig' });
  });
});
