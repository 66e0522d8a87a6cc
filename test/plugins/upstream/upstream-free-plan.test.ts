import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstreamWorld, TEST_UPSTREAM, textOf, type ToolAnswer, type UpstreamWorld } from './upstream-world.ts';

/**
 * The desk in front of a person's own MCP servers is the product,
 * so `mcp.upstreams` is in the free plan: a service that never connected to
 * the cloud (the local free policy) and one holding a free license (the
 * certificate, from the gateway's stored free plan) both call an upstream
 * read at once and stage its write. Before, both answered
 * `entitlement_required ... needs the 'pro' plan (feature mcp.upstreams)`.
 */
let dir: string;
let journal: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-upstream-free-'));
  journal = join(dir, 'journal.txt');
  await writeFile(journal, '');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe.each([
  ['not connected to the cloud (local free policy)', null],
  ['a free cloud license (the certificate)', 'free'],
] as const)('upstream tools on the free plan: %s', (_what, license) => {
  let u: UpstreamWorld;
  beforeAll(async () => {
    u = await startUpstreamWorld({ license });
    await u.ok('POST', 'upstreams', {
      id: 'f',
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [TEST_UPSTREAM],
        env: [{ name: 'JOURNAL', value: journal }],
      },
    });
  }, 120_000);
  afterAll(() => u?.stop());

  it('a read answers and a write is staged, not refused for the plan', async () => {
    const client = await u.mcp();
    try {
      const read = (await client.callTool({ name: 'f__lookup', arguments: { word: 'desk' } })) as ToolAnswer;
      expect(read.isError ?? false).toBe(false);
      expect(textOf(read)).toBe('found desk');
      const write = (await client.callTool({ name: 'f__append', arguments: { line: 'free' } })) as ToolAnswer;
      expect(JSON.stringify(write)).not.toContain('entitlement_required');
      expect(write.isError ?? false).toBe(false);
      expect(write.structuredContent).toMatchObject({ status: 'pending_approval' });
      expect(await readFile(journal, 'utf8')).toBe(''); // staged, nothing written yet
    } finally {
      await client.close();
    }
  });
});

describe('the operator can still narrow it for an account', () => {
  let u: UpstreamWorld;
  beforeAll(async () => {
    u = await startUpstreamWorld({ license: null });
    await u.ok('POST', 'upstreams', {
      id: 'f',
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [TEST_UPSTREAM],
        env: [{ name: 'JOURNAL', value: journal }],
      },
    });
  }, 120_000);
  afterAll(() => u?.stop());

  it("features_off in the account's policy refuses upstream tools at the next sync; taken out again, they answer", async () => {
    const account = await u.w.h.op<{ id: string }>('accounts.add', { name: 'narrowed' });
    await u.w.admin('POST', 'cloud/connect', { url: u.w.proxy.url });
    const lic = await u.w.h.op<{ license_key: string }>('licenses.create', { plan: 'free', account: account.id });
    expect((await u.w.admin('POST', 'cloud/activate', { license_key: lic.license_key })).status).toBe(200);
    const client = await u.mcp();
    const lookup = async () =>
      (await client.callTool({ name: 'f__lookup', arguments: { word: 'desk' } })) as ToolAnswer;
    try {
      expect(textOf(await lookup())).toBe('found desk');
      await u.w.h.op('accounts.policy.set', { account: account.id, features_off: ['mcp.upstreams'] });
      await u.w.admin('POST', 'cloud/sync', {});
      const refused = await lookup();
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain('entitlement_required');
      await u.w.h.op('accounts.policy.set', { account: account.id, features_off: [] });
      await u.w.admin('POST', 'cloud/sync', {});
      expect(textOf(await lookup())).toBe('found desk');
    } finally {
      await client.close();
    }
  });
});
