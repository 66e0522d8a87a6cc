import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail } from '../../../main/contract/upstreams.ts';
import { startUpstreamWorld, textOf, until, type UpstreamWorld } from './upstream-world.ts';

/**
 * An upstream whose approved schemas carry the patterns that took JavaScript's regular expression
 * engine seconds on the event loop (`^(a+)+$` on the agent's argument, `^(a|a)+$` on the upstream's own
 * result): through the real service and the real SDK client, each call is answered at once (the value
 * refused for its pattern) and the admin API answers meanwhile; a pattern RE2 cannot run keeps its tool
 * from being offered, saying why; an ordinary pattern validates and refuses as before.
 */
const LONG = `${'a'.repeat(50_000)}!`;
const READ = { readOnlyHint: true };
const TOOLS = [
  {
    name: 'evil_in',
    description: 'Takes a word of a letters.',
    inputSchema: { type: 'object', properties: { word: { type: 'string', pattern: '^(a+)+$' } }, required: ['word'] },
    annotations: READ,
  },
  {
    name: 'evil_out',
    description: 'Answers a word checked by its output schema.',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: { type: 'object', properties: { word: { type: 'string', pattern: '^(a|a)+$' } }, required: ['word'] },
    annotations: READ,
  },
  {
    name: 'lookahead',
    description: 'Takes a code with a digit.',
    inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(?=.*\\d).{4,}$' } } },
    annotations: READ,
  },
  {
    name: 'plain',
    description: 'Takes a lower-case name.',
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', pattern: '^[a-z]{1,20}$' } },
      required: ['name'],
    },
    annotations: READ,
  },
];

let u: UpstreamWorld;
let http: HttpServer;
let client: Client;
let sent = 0;

beforeAll(async () => {
  const upstream = () => {
    const s = new Server({ name: 'patterns', version: '1.0.0' }, { capabilities: { tools: {} } });
    s.setRequestHandler('tools/list', async () => ({ tools: TOOLS as never }));
    s.setRequestHandler('tools/call', async (req) => {
      sent++;
      if (req.params.name === 'evil_out')
        return { structuredContent: { word: LONG }, content: [{ type: 'text', text: 'a word' }] };
      return { content: [{ type: 'text', text: `ran ${req.params.name}` }] };
    });
    return s;
  };
  http = createServer(toNodeHandler(createMcpHandler(upstream)));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  u = await startUpstreamWorld({ license: null });
  await u.ok('POST', 'upstreams', {
    id: 'pat',
    transport: { kind: 'http', url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, headers: [] },
  });
  client = await u.mcp();
}, 60_000);

afterAll(async () => {
  await client?.close();
  await u?.stop();
  await new Promise<void>((r) => (http ? http.close(() => r()) : r()));
});

describe('schema patterns cannot freeze the service', () => {
  it("an evil input pattern: the agent's long argument is refused at once, the admin API answers meanwhile", async () => {
    const before = sent;
    const [answer, admin] = await Promise.all([
      client.callTool({ name: 'pat__evil_in', arguments: { word: LONG } }),
      u.ok<UpstreamDetail>('GET', 'upstreams/pat'),
    ]);
    expect(admin.health.status).toBe('connected');
    expect(answer.isError).toBe(true);
    expect(textOf(answer)).toMatch(/word.*must match pattern/);
    // refused before the upstream: nothing was sent
    expect(sent).toBe(before);
    expect(textOf(await client.callTool({ name: 'pat__evil_in', arguments: { word: 'aaaa' } }))).toBe('ran evil_in');
  }, 30_000);

  it("an evil output pattern on the upstream's own result: refused at once, the admin API answers meanwhile", async () => {
    const [answer, admin] = await Promise.all([
      client.callTool({ name: 'pat__evil_out', arguments: {} }),
      u.ok<UpstreamDetail>('GET', 'upstreams/pat'),
    ]);
    expect(admin.id).toBe('pat');
    expect(answer.isError).toBe(true);
    // the upstream connection's SDK client checks the result against the output schema, with the same engine
    expect(textOf(answer)).toMatch(/does not match the tool's output schema: data\/word must match pattern/);
  }, 30_000);

  it('a pattern RE2 cannot run keeps its tool from being offered, saying why', async () => {
    const d = (await until(
      async () => {
        const got = await u.ok<UpstreamDetail>('GET', 'upstreams/pat');
        return got.problems.length ? got : null;
      },
      10_000,
      'the problem',
    ))!;
    expect(d.problems.join('\n')).toMatch(/pat__lookahead: .*cannot be checked in linear time/);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('pat__plain');
    expect(names).not.toContain('pat__lookahead');
  });

  it('an ordinary pattern validates and refuses as before', async () => {
    expect(textOf(await client.callTool({ name: 'pat__plain', arguments: { name: 'gatehouse' } }))).toBe('ran plain');
    const refused = await client.callTool({ name: 'pat__plain', arguments: { name: 'Gate House' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/name.*must match pattern/);
  });
});
