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
    read: ['simulate-research-query', 'toggle-subscriber-updates'],
  });
  // The same server given a credential that is one of its completion values: the answer masks it.
  await u.ok('POST', 'upstreams', {
    id: 'evs',
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [EVERYTHING],
      env: [{ name: 'DEPT_API_KEY', value: 'Engineering' }],
    },
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

describe('completions', () => {
  const department = (name: string) => ({
    ref: { type: 'ref/prompt' as const, name },
    argument: { name: 'department', value: 'S' },
  });

  for (const era of ERAS) {
    it(`advertises completions and answers a prompt's argument as the upstream does (${eraName(era)} client)`, async () => {
      expect(direct.getServerCapabilities()?.completions).toBeDefined();
      const own = await direct.complete(department('completable-prompt'));
      expect(own.completion.values).toEqual(['Sales', 'Support']);
      const c = await through(era);
      try {
        expect(c.getServerCapabilities()?.completions).toEqual({});
        expect((await c.complete(department('ev__completable-prompt'))).completion).toEqual(own.completion);
        // the context (an argument already chosen) reaches the upstream too
        const named = {
          ref: { type: 'ref/prompt' as const, name: 'completable-prompt' },
          argument: { name: 'name', value: '' },
          context: { arguments: { department: 'Sales' } },
        };
        const ownNames = await direct.complete(named);
        expect(ownNames.completion.values).toEqual(['David', 'Eve', 'Frank']);
        const names = await c.complete({ ...named, ref: { ...named.ref, name: 'ev__completable-prompt' } });
        expect(names.completion).toEqual(ownNames.completion);
      } finally {
        await c.close();
      }
    });

    it(`answers a resource template's argument under its wrapped URI (${eraName(era)} client)`, async () => {
      const template = 'demo://resource/dynamic/text/{resourceId}';
      const arg = { name: 'resourceId', value: '7' };
      const own = await direct.complete({ ref: { type: 'ref/resource', uri: template }, argument: arg });
      expect(own.completion.values).toEqual(['7']);
      const c = await through(era);
      try {
        const wrapped = (await c.listResourceTemplates()).resourceTemplates.find(
          (t) => t.uriTemplate.startsWith('gatehouse-upstream://ev/') && t.uriTemplate.endsWith(template),
        );
        expect(wrapped).toBeDefined();
        const r = await c.complete({ ref: { type: 'ref/resource', uri: wrapped!.uriTemplate }, argument: arg });
        expect(r.completion).toEqual(own.completion);
        // a template the upstream never listed is not passed on
        await expect(
          c.complete({
            ref: { type: 'ref/resource', uri: 'gatehouse-upstream://ev/demo://nothing/{x}' },
            argument: arg,
          }),
        ).rejects.toThrow(/not found/);
      } finally {
        await c.close();
      }
    });

    it(`masks what the upstream was given in its completions (${eraName(era)} client)`, async () => {
      const c = await through(era);
      try {
        const r = await c.complete({
          ...department('evs__completable-prompt'),
          argument: { name: 'department', value: 'E' },
        });
        expect(r.completion.values).toHaveLength(1);
        expect(r.completion.values[0]).not.toContain('Engineering');
      } finally {
        await c.close();
      }
    });
  }
});

describe('resource subscriptions', () => {
  const OWN = 'demo://resource/static/document/architecture.md';
  const WRAPPED = `gatehouse-upstream://ev/${OWN}`;

  // The upstream sends an update for each URI subscribed every 5 s once this is on (its session is Gatehouse's).
  beforeAll(async () => {
    const c = await through('legacy');
    await c.callTool({ name: 'ev__toggle-subscriber-updates', arguments: {} });
    await c.close();
  });

  /** The next notifications/resources/updated this client hears (it must name `uri`). */
  const nextUpdate = (c: Client) =>
    new Promise<string>((resolve) =>
      c.setNotificationHandler('notifications/resources/updated', (n) => resolve(n.params.uri)),
    );

  it('advertises resources.subscribe as the upstream does (both eras)', async () => {
    expect(direct.getServerCapabilities()?.resources?.subscribe).toBe(true);
    for (const era of ERAS) {
      const c = await through(era);
      expect(c.getServerCapabilities()?.resources, era).toEqual({ listChanged: true, subscribe: true });
      await c.close();
    }
  });

  it("forwards a 2025 client's subscribe under the upstream's URI and relays its updates under Gatehouse's", async () => {
    const c = await through('legacy');
    try {
      const heard = nextUpdate(c);
      await c.subscribeResource({ uri: WRAPPED });
      expect(await heard).toBe(WRAPPED);
      await c.unsubscribeResource({ uri: WRAPPED });
      // a URI the upstream never offered is not subscribed
      await expect(c.subscribeResource({ uri: 'gatehouse-upstream://ev/demo://nothing' })).rejects.toThrow(/not found/);
    } finally {
      await c.close();
    }
  }, 20_000);

  it('subscribes a 2026-07-28 listen stream to the resources it names and relays their updates', async () => {
    const c = await through('modern');
    try {
      const heard = nextUpdate(c);
      const sub = await c.listen({ resourceSubscriptions: [WRAPPED] });
      expect(sub.honoredFilter.resourceSubscriptions).toEqual([WRAPPED]);
      expect(await heard).toBe(WRAPPED);
      await sub.close();
    } finally {
      await c.close();
    }
  }, 20_000);
});
