import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING, startUpstreamWorld, until, type UpstreamWorld } from './upstream-world.ts';

/**
 * Tools are listed to the clients that can use them (docs/decisions.md, "Learn the sets by listing, not by guessing from
 * schemas"): the real server-everything lists its sampling and elicitation tools only to a client that declared
 * those capabilities; Gatehouse declares both to it, so it learns which by asking again declaring fewer, and lists
 * each client, in both eras, what its declared capabilities let it use. Compared with what server-everything lists
 * directly to the same client.
 */
let u: UpstreamWorld;
beforeAll(async () => {
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'ev',
    transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
  });
}, 120_000);
afterAll(async () => u?.stop());

type Era = 'legacy' | 'modern';
async function namesThrough(capabilities: Record<string, unknown>, era: Era): Promise<string[]> {
  const c = new Client(
    { name: 'needs-test', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } } },
  );
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${u.token}` } },
    }),
  );
  try {
    const { tools } = await c.listTools();
    return tools
      .map((t) => t.name)
      .filter((n) => n.startsWith('ev__'))
      .map((n) => n.slice(4))
      .sort();
  } finally {
    await c.close();
  }
}
async function namesDirect(capabilities: Record<string, unknown>): Promise<string[]> {
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const c = new Client({ name: 'needs-test', version: '1.0.0' }, { capabilities });
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'] }));
  try {
    return (await c.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await c.close();
  }
}

const NEITHER = {};
const SAMPLING = { sampling: {} };
const ELICITATION = { elicitation: { form: {}, url: {} } };
const BOTH = { ...SAMPLING, ...ELICITATION };

describe('tools listed to the clients that can use them', () => {
  it('each client is listed what server-everything lists to a client declaring the same, in both eras', async () => {
    const direct = {
      neither: await namesDirect(NEITHER),
      sampling: await namesDirect(SAMPLING),
      elicitation: await namesDirect(ELICITATION),
      both: await namesDirect(BOTH),
    };
    // What makes the test mean something: server-everything itself lists fewer tools to a client without them.
    expect(direct.both.length).toBeGreaterThan(direct.neither.length);
    expect(direct.both).toContain('trigger-sampling-request');
    expect(direct.neither).not.toContain('trigger-sampling-request');
    expect(direct.neither).not.toContain('trigger-elicitation-request');

    // The learning runs once the upstream is connected, in the background.
    await until(
      async () => (await namesThrough(NEITHER, 'legacy')).length === direct.neither.length,
      30_000,
      'the tools needing a capability to be learned',
    );
    for (const era of ['legacy', 'modern'] as const) {
      expect(await namesThrough(NEITHER, era), era).toEqual(direct.neither);
      expect(await namesThrough(SAMPLING, era), era).toEqual(direct.sampling);
      expect(await namesThrough(ELICITATION, era), era).toEqual(direct.elicitation);
      expect(await namesThrough(BOTH, era), era).toEqual(direct.both);
    }
  }, 120_000);
});
