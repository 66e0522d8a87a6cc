import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UI_EXTENSION } from '../../../main/contract/mcp-apps.ts';
import { TASKS_EXTENSION } from '../../../main/mcp/staged-tasks.ts';
import { LOGGING_META_KEY } from '../../../main/mcp/server-factory.ts';
import { EVERYTHING, REPO, startUpstreamWorld, until, type UpstreamWorld } from './upstream-world.ts';

/**
 * The capabilities Gatehouse advertises in its initialize (2025) and server/discover (2026-07-28) answer
 * (docs/upstreams.md, "Capabilities"): its own (tools, resources and prompts whose lists change at run time,
 * logging, MCP Apps views) whatever its upstreams offer, and completions and resource subscriptions only where an
 * upstream the caller sees offers them. Without upstreams, with one that offers nothing beyond its tools
 * (offers-upstream.mjs without logging) and with server-everything, which offers everything. `logging` is
 * Gatehouse's own: it takes a client's level for what it relays and says which upstreams it sent it to.
 */
const OFFERS = `${REPO}test/fixtures/upstream/offers-upstream.mjs`;
const ERAS = ['legacy', 'modern'] as const;
let u: UpstreamWorld;

/** What Gatehouse offers of its own, with or without upstreams (2026-07-28: staged writes as tasks too, docs/tasks.md). */
const own = (era: (typeof ERAS)[number]) => ({
  tools: { listChanged: true },
  resources: { listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  extensions: { [UI_EXTENSION]: {}, ...(era === 'modern' ? { [TASKS_EXTENSION]: {} } : {}) },
});

async function client(era: (typeof ERAS)[number]): Promise<Client> {
  const c = new Client(
    { name: 'capabilities-test', version: '1.0.0' },
    { versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } } },
  );
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${u.token}` } },
    }),
  );
  return c;
}

async function capabilities(era: (typeof ERAS)[number]): Promise<Record<string, unknown>> {
  const c = await client(era);
  try {
    return c.getServerCapabilities() as Record<string, unknown>;
  } finally {
    await c.close();
  }
}

beforeAll(async () => {
  u = await startUpstreamWorld();
}, 60_000);
afterAll(async () => {
  await u?.stop();
});

describe('the capabilities advertised', () => {
  for (const era of ERAS) {
    it(`without upstreams: Gatehouse's own only (${era === 'legacy' ? '2025' : '2026-07-28'})`, async () => {
      expect(await capabilities(era)).toEqual(own(era));
    });
  }

  it("with an upstream that offers only tools: still Gatehouse's own only; its prompts list still changes, and clients hear it", async () => {
    await u.ok('POST', 'upstreams', {
      id: 'mute',
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [OFFERS],
        env: [{ name: 'NO_LOGGING', value: '1' }],
      },
    });
    const direct = new Client({ name: 'direct', version: '1' });
    await direct.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [OFFERS],
        env: { NO_LOGGING: '1' },
        stderr: 'ignore',
      }),
    );
    expect(Object.keys(direct.getServerCapabilities() ?? {})).toEqual(['tools']);
    await direct.close();
    for (const era of ERAS) expect(await capabilities(era), era).toEqual(own(era));
    // logging is Gatehouse's: it takes the level for what it relays, and says it sent it to no upstream
    const l = await client('legacy');
    try {
      const r = (await l.setLoggingLevel('info')) as { _meta?: Record<string, unknown> };
      expect(r._meta?.[LOGGING_META_KEY]).toEqual({ sent_to: [], without_logging: ['mute'], failed: [] });
    } finally {
      await l.close();
    }

    // prompts.listChanged is Gatehouse's: its list changes when a person adds an upstream with prompts
    const c = await client('legacy');
    let heard = 0;
    c.setNotificationHandler('notifications/prompts/list_changed', () => void heard++);
    try {
      expect((await c.listPrompts()).prompts).toEqual([]);
      await u.ok('POST', 'upstreams', {
        id: 'ev',
        transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING], env: [] },
      });
      await until(() => heard > 0, 15_000, 'notifications/prompts/list_changed');
      expect((await c.listPrompts()).prompts.some((p) => p.name.startsWith('ev__'))).toBe(true);
    } finally {
      await c.close();
    }
  }, 60_000);

  for (const era of ERAS) {
    it(`with server-everything: completions and resource subscriptions too, as it offers them (${era === 'legacy' ? '2025' : '2026-07-28'})`, async () => {
      expect(await capabilities(era)).toEqual({
        ...own(era),
        resources: { listChanged: true, subscribe: true },
        completions: {},
      });
    });
  }
});
