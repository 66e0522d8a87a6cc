import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Exchange2025 } from '../../main/mcp/exchange-2025.ts';

// The 2025-era exchange on its own, between a low-level SDK server and the real SDK client:
// JSON when nothing streams, SSE from the moment a handler sends something before its result.

let http: HttpServer | null = null;
afterEach(async () => {
  await new Promise<void>((r) => (http ? http.close(() => r()) : r()));
  http = null;
});

async function serve(): Promise<string> {
  http = createServer((req, res) => {
    if (req.method !== 'POST') {
      // no notification stream in this test server (the client asks for one after initialized)
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const server = new Server({ name: 'exchange-test', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/list', async () => ({
        tools: [{ name: 'work', inputSchema: { type: 'object' } }],
      }));
      server.setRequestHandler('tools/call', async (request, ctx) => {
        const token = request.params._meta?.progressToken;
        if (token !== undefined)
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress: 1, total: 2 },
          });
        if (request.params.name === 'fail') throw new Error('no such luck');
        return { content: [{ type: 'text', text: 'done' }] };
      });
      const exchange = new Exchange2025(res, 'req-test', { token: 't', clientId: 't', scopes: [] });
      await server.connect(exchange);
      await exchange.serve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      await server.close();
    })();
  });
  await new Promise<void>((r) => http!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(http!.address() as AddressInfo).port}/mcp`;
}

/** The real client, remembering the media type of every POST answer. */
async function client(url: string) {
  const types: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (init?.method === 'POST') types.push(res.headers.get('content-type') ?? '(none)');
    return res;
  };
  const c = new Client({ name: 'exchange-test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }));
  return { c, types };
}

describe('Exchange2025', () => {
  it('answers JSON when the call sends nothing before its result', async () => {
    const { c, types } = await client(await serve());
    types.length = 0;
    expect((await c.callTool({ name: 'work', arguments: {} })).content).toEqual([{ type: 'text', text: 'done' }]);
    expect(types).toEqual(['application/json']);
    await c.close();
  });

  it('turns into an SSE stream when the handler sends progress first, and the client gets both', async () => {
    const { c, types } = await client(await serve());
    types.length = 0;
    const progress: number[] = [];
    const result = await c.callTool({ name: 'work', arguments: {} }, { onprogress: (p) => progress.push(p.progress) });
    expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(progress).toEqual([1]);
    expect(types).toEqual(['text/event-stream']);
    await c.close();
  });

  it('gives a JSON-RPC error data.code and the request id', async () => {
    const url = await serve();
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'prompts/list' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: 4,
      error: { code: -32601, data: { code: 'method_not_found', request_id: 'req-test' } },
    });
  });

  it('answers a notification with 202 and no body', async () => {
    const url = await serve();
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });
});
