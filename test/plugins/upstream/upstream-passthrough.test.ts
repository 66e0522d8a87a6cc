import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING, startUpstreamWorld, textOf, type UpstreamWorld } from './upstream-world.ts';

/**
 * What server-everything (2025 era, stdio) offers beyond its tools' names and schemas reaches a client through
 * Gatehouse as it reaches one directly: task support, completions, resource subscriptions. The real server,
 * directly and through the real gateway with the SDK client, in both protocol eras.
 */
let u: UpstreamWorld;
let direct: Client;
const ERAS = ['legacy', 'modern'] as const;
type Era = (typeof ERAS)[number];
const eraName = (era: Era) => (era === 'legacy' ? '2025' : '2026-07-28');

async function through(era: Era): Promise<Client> {
  const c = new Client(
    { name: 'passthrough-test', version: '1.0.0' },
    { versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } } },
  );
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${u.token}` } },
    }),
  );
  return c;
}

beforeAll(async () => {
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'ev',
    transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING], env: [] },
    read: ['simulate-research-query'],
  });
  direct = new Client({ name: 'direct', version: '1' });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING], stderr: 'ignore' }));
}, 120_000);
afterAll(async () => {
  await direct?.close();
  await u?.stop();
});

describe('task support', () => {
  for (const era of ERAS) {
    // 2026-07-28 deleted `execution` from Tool (tasks are an extension there): the SDK's codec drops it in that era.
    it(`lists every tool's execution as the upstream sent it${era === 'modern' ? ', which 2026-07-28 has no word for' : ''} (${eraName(era)} client)`, async () => {
      const own = (await direct.listTools()).tools;
      const c = await through(era);
      const listed = new Map((await c.listTools()).tools.map((t) => [t.name, t]));
      await c.close();
      const withExecution = own.filter((t) => t.execution !== undefined);
      expect(withExecution.map((t) => t.name)).toContain('simulate-research-query');
      for (const t of withExecution) {
        const mine = listed.get(`ev__${t.name}`);
        expect(mine, t.name).toBeDefined();
        expect(mine!.execution, t.name).toEqual(era === 'legacy' ? t.execution : undefined);
      }
    });

    it(`runs a tool that requires a task as the upstream's task and answers with its result (${eraName(era)} client)`, async () => {
      const c = await through(era);
      try {
        // Gatehouse offers no 2025 `tasks` capability, so the client calls it plainly (2025-11-25: clients MUST NOT
        // augment a call the server has no tasks capability for); directly, a plain call is refused.
        expect(c.getServerCapabilities()?.tasks).toBeUndefined();
        const plain = await direct.callTool({ name: 'simulate-research-query', arguments: { topic: 'owls' } });
        expect(plain.isError).toBe(true);
        const r = await c.callTool({ name: 'ev__simulate-research-query', arguments: { topic: 'owls' } });
        expect(r.isError, textOf(r)).toBeFalsy();
        expect(textOf(r)).toContain('# Research Report: owls');
        expect(textOf(r)).toContain('Stage 4: Generating report');
      } finally {
        await c.close();
      }
    }, 30_000);
  }
});
