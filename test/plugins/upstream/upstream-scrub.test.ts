import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoSecretServer } from '../../fixtures/upstream/echo-secret-server.ts';
import { REPO, startUpstreamWorld, until, type UpstreamWorld } from './upstream-world.ts';

/**
 * An upstream that echoes the credential it was given (its env value over stdio, its Authorization header
 * over HTTP) on every path an answer takes: what reaches the agent through the real SDK client has it
 * masked, and the echo itself is seen (`[redacted]` where the value was), so no check passes for nothing.
 */
const ECHO_UPSTREAM = `${REPO}test/fixtures/upstream/echo-secret-upstream.ts`;
const ENV_SECRET = `env-${randomBytes(16).toString('hex')}`;
const HEADER_SECRET = `hdr_${randomBytes(16).toString('base64url')}`;

let u: UpstreamWorld;
let http: Server;

/** A 2025-era client that can be asked (elicitation), noting what it hears: elicitation messages and log notifications. */
async function client(heard: string[], token: string): Promise<Client> {
  const c = new Client(
    { name: 'scrub-test', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'legacy' } },
  );
  c.setRequestHandler('elicitation/create', async (req) => {
    heard.push(JSON.stringify(req.params));
    return { action: 'decline' } as never;
  });
  c.setNotificationHandler('notifications/message', (n) => void heard.push(JSON.stringify(n.params)));
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return c;
}

/** What the client got for one request, answer or error, as text. */
async function got(p: Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify(await p);
  } catch (e) {
    return JSON.stringify({ error: (e as Error).message, data: (e as { data?: unknown }).data });
  }
}

beforeAll(async () => {
  u = await startUpstreamWorld();
  http = createServer(
    toNodeHandler(
      createMcpHandler(() => echoSecretServer((ctx) => ctx.http?.req?.headers.get('authorization') ?? 'no header')),
    ),
  );
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  await u.ok('POST', 'upstreams', {
    id: 'envecho',
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [ECHO_UPSTREAM],
      env: [{ name: 'ECHO_SECRET', value: ENV_SECRET }],
    },
  });
  await u.ok('POST', 'upstreams', {
    id: 'hdrecho',
    transport: { kind: 'http', url, headers: [{ name: 'Authorization', value: `Bearer ${HEADER_SECRET}` }] },
  });
  // both listed their resources (a listing follows each connect); on a token of its own, as each group of tests has
  const c = await client([], (await u.w.svc.createToken({ label: 'listing', user: 'admin' })).token);
  await until(
    async () =>
      (await c.listResources()).resources.filter((r) => r.uri.endsWith('/echo://blob')).length === 2 ? true : null,
    20_000,
    'the resource listings',
  );
  await c.close();
}, 60_000);

afterAll(async () => {
  await u?.stop();
  await new Promise<void>((r) => (http ? http.close(() => r()) : r()));
});

describe.each([
  ['envecho', ENV_SECRET],
  ['hdrecho', HEADER_SECRET],
])('upstream %s echoing its credential', (id, secret) => {
  // a token per group: the endpoint's per-token rate must not decide these tests
  let token: string;
  beforeAll(async () => void (token = (await u.w.svc.createToken({ label: id, user: 'admin' })).token));
  const clean = (text: string) => {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(Buffer.from(secret).toString('base64').slice(0, 16));
    expect(text).toContain('[redacted]');
  };

  it('an error result, a JSON-RPC error and structured content reach the agent masked', async () => {
    const c = await client([], token);
    try {
      const fail = await got(c.callTool({ name: `${id}__fail`, arguments: {} }));
      expect(fail).toContain('the remote refused the key');
      clean(fail);
      const thrown = await got(c.callTool({ name: `${id}__throws`, arguments: {} }));
      expect(thrown).toContain('bad key');
      clean(thrown);
      const structured = (await c.callTool({ name: `${id}__structured`, arguments: {} })) as {
        structuredContent: { seen: string };
        content: Array<{ type: string; text?: string; data?: string }>;
      };
      expect(structured.structuredContent.seen).toMatch(/\[redacted\]$/);
      clean(JSON.stringify(structured));
      // the image's bytes were masked and encoded again: still base64, still the rest of the picture
      const image = structured.content.find((b) => b.type === 'image')!;
      expect(Buffer.from(image.data!, 'base64').toString('utf8')).toBe('png with [redacted] inside');
    } finally {
      await c.close();
    }
  }, 30_000);

  it('progress, a log notification and an elicitation the upstream sends reach the agent masked, if at all', async () => {
    const heard: string[] = [];
    const c = await client(heard, token);
    try {
      const progress: string[] = [];
      const chatty = c.callTool(
        { name: `${id}__chatty`, arguments: {} },
        {
          onprogress: (p) => void progress.push(JSON.stringify(p)),
        },
      );
      // its result waits for the release, so the progress cannot be overtaken by it
      await until(() => progress.length > 0, 10_000, 'the progress');
      await c.callTool({ name: `${id}__release`, arguments: {} });
      expect(JSON.stringify(await chatty)).toContain('done');
      expect(progress[0]).toContain('working with');
      clean(progress.join());
      const asked = await got(c.callTool({ name: `${id}__ask`, arguments: {} }));
      expect(asked).toContain('asked: decline');
      await until(() => heard.some((h) => h.includes('Confirm the key')), 5_000, 'the elicitation');
      expect(heard.join()).not.toContain(secret);
      clean(heard.filter((h) => h.includes('Confirm the key')).join());
    } finally {
      await c.close();
    }
  }, 30_000);

  it('prompts/get, its error and resources/read (text and blob) reach the agent masked', async () => {
    const c = await client([], token);
    try {
      const prompt = await got(c.getPrompt({ name: `${id}__echo` }));
      expect(prompt).toContain('prompt with');
      clean(prompt);
      const broken = await got(c.getPrompt({ name: `${id}__broken` }));
      expect(broken).toContain('prompt failed for');
      clean(broken);
      const text = await got(c.readResource({ uri: `gatehouse-upstream://${id}/echo://text` }));
      expect(text).toContain('resource with');
      clean(text);
      const blob = (await c.readResource({ uri: `gatehouse-upstream://${id}/echo://blob` })) as {
        contents: Array<{ blob: string }>;
      };
      const bytes = Buffer.from(blob.contents[0]!.blob, 'base64').toString('utf8');
      expect(bytes).toBe('bytes of [redacted]');
    } finally {
      await c.close();
    }
  }, 30_000);
});
