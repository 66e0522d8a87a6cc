import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateClientMetadataUrl } from '@modelcontextprotocol/client';
import { createCloudHandler } from '../../../cloud/http/handler.ts';
import { CLIENT_METADATA_MAX_AGE_S } from '../../../cloud/http/routes-client-metadata.ts';
import { CLIENT_METADATA_PATH, OAUTH_CALLBACK_PATH, OAUTH_CALLBACK_PORTS } from '../../../main/contract/oauth.ts';
import { rawRequest } from '../helpers/client.ts';
import { startHarness, type Harness } from '../helpers/cloud-harness.ts';

/**
 * Gatehouse's OAuth Client ID Metadata Document on the real gateway: the
 * harness's own service (no --public-url, reached on loopback) and the same
 * gateway's handler over the same ledger with a configured public URL.
 */
let h: Harness;
const extra: Server[] = [];
beforeAll(async () => {
  h = await startHarness();
}, 180_000);
afterAll(async () => {
  for (const s of extra) s.close();
  await h?.stop();
});

/** The real handler over the harness's ledger, as `serve --public-url URL` builds it. */
async function gatewayWithPublicUrl(publicUrl: string): Promise<string> {
  const handler = createCloudHandler(h.svc.ctx, { publicUrl, rateLimits: { perAddress: 0, perSite: 0, register: 0 } });
  const server = createServer((req, res) => void handler(req, res));
  extra.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('client ID metadata document', () => {
  it('with an https public URL: client_id is that URL and the path, the loopback callbacks, a public native client, cacheable', async () => {
    const base = await gatewayWithPublicUrl('https://gateway.example');
    const r = await rawRequest(`${base}${CLIENT_METADATA_PATH}`, 'GET', {});
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    const clientId = `https://gateway.example${CLIENT_METADATA_PATH}`;
    expect(r.body).toEqual({
      client_id: clientId,
      client_name: 'Gatehouse',
      redirect_uris: OAUTH_CALLBACK_PORTS.map((p) => `http://127.0.0.1:${p}${OAUTH_CALLBACK_PATH}`),
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    });
    // The SDK's own check of a URL-based client id (https, a path) accepts it; a client secret is never there.
    expect(() => validateClientMetadataUrl(r.body.client_id)).not.toThrow();
    expect(JSON.stringify(r.body)).not.toMatch(/secret/);
    expect(r.headers['cache-control']).toBe(`public, max-age=${CLIENT_METADATA_MAX_AGE_S}`);
    const etag = r.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    // A conditional fetch of an unchanged document is a 304 without a body.
    const again = await rawRequest(`${base}${CLIENT_METADATA_PATH}`, 'GET', { 'If-None-Match': etag });
    expect([again.status, again.body, again.headers.etag]).toEqual([304, '', etag]);
    // The Host a request names changes nothing: the id comes from the configuration.
    const spoofed = await rawRequest(`${base}${CLIENT_METADATA_PATH}`, 'GET', { Host: 'evil.example' });
    expect(spoofed.body.client_id).toBe(clientId);
  });

  it('refuses a plain-http public URL that is not loopback, with what to configure', async () => {
    const base = await gatewayWithPublicUrl('http://gateway.example');
    const r = await rawRequest(`${base}${CLIENT_METADATA_PATH}`, 'GET', {});
    expect([r.status, r.body.success, r.body.error.code]).toEqual([404, false, 'not_found']);
    expect(r.body.error.message).toMatch(/https/);
    expect(r.body.error.message).toMatch(/--public-url https:\/\//);
  });

  it('without a public URL: served for a loopback test setup only, never for a Host a request names', async () => {
    const r = await rawRequest(`${h.svc.baseUrl}${CLIENT_METADATA_PATH}`, 'GET', {});
    expect(r.status).toBe(200);
    expect(r.body.client_id).toBe(`${h.svc.baseUrl}${CLIENT_METADATA_PATH}`);
    const named = await rawRequest(`${h.svc.baseUrl}${CLIENT_METADATA_PATH}`, 'GET', { Host: 'gateway.example' });
    expect([named.status, named.body.error.code]).toEqual([404, 'not_found']);
    expect(named.body.error.message).toMatch(/--public-url/);
    // Only GET reads it.
    expect((await rawRequest(`${h.svc.baseUrl}${CLIENT_METADATA_PATH}`, 'POST', {}, '{}')).status).toBe(405);
  });
});
