import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_PREFIX } from '../../main/contract/health.ts';
import { ADMIN_KEY_ACCOUNT } from '../../main/store/vault-account.ts';
import { INIT, rawPost, startTestService } from '../helpers/service.ts';
import { rawRequest, rawSocket } from '../lib/http/serve.ts';

// Edge defects of the HTTP layer, each answered 500 (or held unbounded memory) before main/lib/http.
let svc: Awaited<ReturnType<typeof startTestService>>;
let token: string;
let adminKey: string;
let port: number;

beforeAll(async () => {
  svc = await startTestService({ limits: { bodyBudgetBytes: 2 * 1024 * 1024, maxConnections: 32 } });
  token = (await svc.createToken({ label: 'edge' })).token;
  // Every authenticated request spends the token's budget, malformed ones too (the rate limit comes
  // before the body is read); this file sends a few hundred with one token.
  await svc.dispatch('settings.update', { rate_limit: 100_000 });
  adminKey = (await svc.core.vault.get(ADMIN_KEY_ACCOUNT))!;
  port = Number(new URL(svc.baseUrl).port);
});
afterAll(async () => svc?.cleanup());

const auth = () => ({ Authorization: `Bearer ${token}` });

async function rpcError(res: Response) {
  const body = (await res.json()) as { error: { code: number; data: { code: string; request_id: string } } };
  expect(body.error.data.request_id).toBe(res.headers.get('x-request-id'));
  return body.error;
}

describe('malformed MCP bodies get a 4xx with the right JSON-RPC code, never a 500', () => {
  it('a body nested 20,000 levels deep: 400, -32700, parse_error', async () => {
    const deepParams = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"site_identity","arguments":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`;
    for (const body of [deepParams, `${'['.repeat(20_000)}${']'.repeat(20_000)}`]) {
      const res = await rawPost(svc.mcpUrl, body, auth());
      expect(res.status).toBe(400);
      const err = await rpcError(res);
      expect(err.code).toBe(-32700);
      expect(err.data.code).toBe('parse_error');
    }
  });

  it('a lone surrogate escape is refused before it can reach the audit log or options.json', async () => {
    const res = await rawPost(
      svc.mcpUrl,
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\ud800","arguments":{}}}',
      auth(),
    );
    expect(res.status).toBe(400);
    expect((await rpcError(res)).data.code).toBe('parse_error');
  });

  it('property: random malformed bodies never get a 5xx (seed printed)', async () => {
    const seed = Number(process.env.GATEHOUSE_FUZZ_SEED ?? 0x0edce);
    console.log(`MCP body fuzz seed: ${seed} (GATEHOUSE_FUZZ_SEED to replay)`);
    let a = seed;
    const rnd = () => ((a = (Math.imul(a ^ (a >>> 15), 2246822519) + 0x9e3779b9) | 0) >>> 0) / 4294967296;
    const valid = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'site_identity', arguments: { q: 'é😀' } },
    });
    const junk = [
      '\\ud800',
      '\u0000',
      '[',
      '{',
      '"',
      '\\',
      '}',
      ']',
      ',',
      'null',
      '\udfff',
      '__proto__',
      'x'.repeat(5000),
    ];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 120; i++) {
      let body = valid;
      const edits = 1 + Math.floor(rnd() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rnd() * body.length);
        const kind = rnd();
        if (kind < 0.4) body = body.slice(0, at) + junk[Math.floor(rnd() * junk.length)] + body.slice(at);
        else if (kind < 0.7) body = body.slice(0, at) + body.slice(at + 1 + Math.floor(rnd() * 5));
        else body = body.slice(0, at);
      }
      const res = await rawPost(svc.mcpUrl, body, auth());
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500)
        throw new Error(`seed ${seed}, case ${i}: ${res.status} for ${JSON.stringify(body.slice(0, 300))}`);
      await res.arrayBuffer();
    }
    expect(statuses.get(400)).toBeGreaterThan(0);
  });
});

describe('malformed requests elsewhere get a 4xx', () => {
  it('a Host with user info or garbage answers 400 (MCP and admin), a foreign Host 403', async () => {
    const mcpHead = (host: string) =>
      `POST /wp-json/gatehouse-mcp/v1/mcp HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream`;
    expect((await rawRequest(port, mcpHead(`user@127.0.0.1:${port}`), JSON.stringify(INIT))).status).toBe(400);
    expect((await rawRequest(port, mcpHead(`127.0.0.1:${port}/x`), JSON.stringify(INIT))).status).toBe(400);
    expect((await rawRequest(port, mcpHead(`evil.example:${port}`), JSON.stringify(INIT))).status).toBe(403);
    expect((await rawPost(svc.mcpUrl, INIT, auth())).status).toBe(200);
    const adminHead = (host: string) =>
      `GET ${ADMIN_PREFIX}/settings HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${adminKey}`;
    const refused = await rawRequest(port, adminHead(`admin@127.0.0.1:${port}`));
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('"code":"invalid_request"');
  });

  it('a cookie with a bad percent escape (settable from any local port) does not break the admin API or pro/*', async () => {
    const cookie = 'junk=%E0%A4%A; other=1';
    const settings = await fetch(`${svc.adminUrl}/settings`, {
      headers: { Authorization: `Bearer ${adminKey}`, Cookie: cookie },
    });
    expect(settings.status).toBe(200);
    const pro = await fetch(`${svc.baseUrl}/wp-json/gatehouse/v1/pro/license`, {
      headers: { Authorization: `Bearer ${adminKey}`, Cookie: cookie },
    });
    expect(pro.status).toBe(200);
    // without credentials it is the ordinary 401, not a 500
    expect((await fetch(`${svc.adminUrl}/settings`, { headers: { Cookie: cookie } })).status).toBe(401);
  });

  it('a malformed percent-escape in the console path or an admin path parameter answers 400', async () => {
    const console = await fetch(`${svc.baseUrl}/console/%E0%A4%A`);
    expect(console.status).toBe(400);
    expect(await console.json()).toMatchObject({ ok: false, code: 'invalid_request' });
    const del = await fetch(`${svc.adminUrl}/tokens/%E0%A4%A`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${adminKey}` },
    });
    expect(del.status).toBe(400);
  });

  it('admin bodies: deep nesting is a 400 parse_error; an unknown route 404; a known one under another method 400 with Allow', async () => {
    const h = { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' };
    const deep = await fetch(`${svc.adminUrl}/settings`, {
      method: 'PATCH',
      headers: h,
      body: `{"cors":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    });
    expect(deep.status).toBe(400);
    expect(await deep.json()).toMatchObject({ ok: false, code: 'parse_error' });
    expect((await fetch(`${svc.adminUrl}/nope`, { headers: h })).status).toBe(404);
    const wrong = await fetch(`${svc.adminUrl}/settings`, { method: 'POST', headers: h, body: '{}' });
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('allow')).toBe('GET, PATCH');
  });
});

describe('bounded resources (before the body budget, 100 stalled 4 MiB bodies took RSS from 116 to 524 MiB)', () => {
  it('stalled authenticated uploads cannot hold more than the body budget; small requests still pass', async () => {
    const head = `POST /wp-json/gatehouse-mcp/v1/mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${4 * 1024 * 1024 - 1024}\r\n\r\n`;
    const stalled = [];
    const before = svc.bodyBytesInUse();
    // each holds 900 KiB, of which 836 KiB count against the 2 MiB budget: the third is refused
    for (let i = 0; i < 3; i++) {
      const s = await rawSocket(port);
      s.write(head + '['.repeat(900 * 1024));
      stalled.push(s);
      // Read in full, its share taken, before the next starts: chunks of uploads sent at once interleave,
      // and whichever upload's chunk finds the budget spent would be the one refused.
      if (i < 2)
        await vi.waitFor(() => expect(svc.bodyBytesInUse()).toBe(before + (i + 1) * 836 * 1024), {
          timeout: 20_000,
          interval: 10,
        });
    }
    await stalled[2]!.ended;
    expect(stalled[2]!.text()).toMatch(/^HTTP\/1\.1 503/);
    expect(stalled[2]!.text()).toContain('"code":"service_unavailable"');
    const small = await rawPost(svc.mcpUrl, INIT, auth());
    expect(small.status).toBe(200);
    for (const s of stalled) s.destroy();
  });

  it('a connection beyond maxConnections is answered 503 with Retry-After at once and closed, never reset', async () => {
    const open = await Promise.all(Array.from({ length: 32 }, () => rawSocket(port)));
    const extra = await rawSocket(port);
    await extra.ended;
    expect(extra.text()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\nRetry-After: 1\r\n/);
    for (const s of open) s.destroy();
  });
});
