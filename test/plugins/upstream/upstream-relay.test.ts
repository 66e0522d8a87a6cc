import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../main/contract/audit.ts';
import { EVERYTHING, startUpstreamWorld, textOf, type UpstreamWorld } from './upstream-world.ts';

/** What an upstream asks of the client mid-call (elicitation, sampling) reaches the Gatehouse client that made the call. */
let u: UpstreamWorld;

const ASKERS = ['trigger-elicitation-request', 'trigger-sampling-request'];

/** A real SDK v2 client (2025 era) that declares `capabilities` and answers what it is asked, noting each request. */
async function clientWith(capabilities: Record<string, unknown>, seen: string[] = []): Promise<Client> {
  const c = new Client({ name: 'relay-test', version: '1.0.0' }, { capabilities });
  if ('elicitation' in capabilities) {
    c.setRequestHandler('elicitation/create', async (req) => {
      seen.push(`elicitation:${(req.params as { message: string }).message.slice(0, 20)}`);
      return { action: 'accept', content: { name: 'Ada Lovelace', check: true, integer: 3, email: 'ada@example.com' } } as never;
    });
  }
  if ('sampling' in capabilities) {
    c.setRequestHandler('sampling/createMessage', async () => {
      seen.push('sampling');
      return { role: 'assistant', content: { type: 'text', text: 'sampled-answer-42' }, model: 'test-model', stopReason: 'endTurn' } as never;
    });
  }
  await c.connect(new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${u.token}` } } }));
  return c;
}

const audited = async (tool: string) => {
  const page = await u.ok<{ entries: AuditEntry[] }>('GET', `audit?tool=${encodeURIComponent(tool)}&limit=5`);
  return page.entries;
};

beforeAll(async () => {
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', { id: 'ev', transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING], env: [] }, read: ASKERS });
}, 120_000);
afterAll(async () => {
  await u?.stop();
});

describe('server-everything (2025 era, stdio) asking the client mid-call', () => {
  it('an elicitation reaches a client that declared it, its answer goes back, and the audit names what was asked (no values)', async () => {
    const seen: string[] = [];
    const c = await clientWith({ elicitation: { form: {} } }, seen);
    try {
      const r = await c.callTool({ name: 'ev__trigger-elicitation-request', arguments: {} });
      expect(r.isError).toBeFalsy();
      expect(seen).toEqual([expect.stringMatching(/^elicitation:Please provide/)]);
      expect(textOf(r)).toContain('Ada Lovelace');
      const [entry] = await audited('ev__trigger-elicitation-request');
      expect(entry).toMatchObject({ result: 'ok', source_plugin: 'ev', asked: 'elicitation/create:form' });
      expect(JSON.stringify(entry)).not.toContain('Ada');
    } finally {
      await c.close();
    }
  });

  it('a sampling request reaches a client that declared sampling', async () => {
    const seen: string[] = [];
    const c = await clientWith({ sampling: {} }, seen);
    try {
      const r = await c.callTool({ name: 'ev__trigger-sampling-request', arguments: { prompt: 'say something' } });
      expect(r.isError).toBeFalsy();
      expect(seen).toEqual(['sampling']);
      expect(textOf(r)).toContain('sampled-answer-42');
      expect((await audited('ev__trigger-sampling-request'))[0]).toMatchObject({ result: 'ok', asked: 'sampling/createMessage' });
    } finally {
      await c.close();
    }
  });

  it('a client without the capability: the call fails with client_capability_missing naming it, and nothing is asked', async () => {
    const seen: string[] = [];
    const c = await clientWith({}, seen);
    try {
      const r = await c.callTool({ name: 'ev__trigger-elicitation-request', arguments: {} });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/^client_capability_missing: upstream 'ev' asks the client for elicitation\/create:form .*'elicitation' capability/);
      const s = await c.callTool({ name: 'ev__trigger-sampling-request', arguments: { prompt: 'x' } });
      expect(textOf(s)).toMatch(/^client_capability_missing: .*'sampling' capability/);
      expect(seen).toEqual([]);
      expect((await audited('ev__trigger-sampling-request'))[0]).toMatchObject({ result: 'error', error_code: 'client_capability_missing' });
    } finally {
      await c.close();
    }
  });
});
