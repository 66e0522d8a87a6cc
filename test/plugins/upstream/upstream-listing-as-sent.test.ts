import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILESYSTEM, startUpstreamWorld, type UpstreamWorld } from './upstream-world.ts';

/**
 * An upstream's tools reach clients with the title and annotations the upstream sent: none made up from
 * the name, no readOnlyHint from the desk's classification (a person's "read" is a rule of the desk, not a
 * claim to clients). The real server-filesystem, listed directly and through Gatehouse with the SDK client.
 */
let u: UpstreamWorld;
let dir: string;
type Listed = { name: string; title?: string; annotations?: Record<string, unknown> };

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'gh-as-sent-')));
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'fs',
    transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, dir] },
  });
}, 120_000);
afterAll(async () => {
  await u?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function direct(): Promise<Listed[]> {
  const c = new Client({ name: 'direct', version: '1' });
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [FILESYSTEM, dir], stderr: 'ignore' }));
  try {
    return (await c.listTools()).tools as Listed[];
  } finally {
    await c.close();
  }
}

describe("an upstream's tool listing", () => {
  it('keeps each tool title and annotations exactly as the server sent them', async () => {
    const own = await direct();
    const client = await u.mcp();
    const through = new Map(((await client.listTools()).tools as Listed[]).map((t) => [t.name, t]));
    await client.close();
    expect(own.length).toBeGreaterThan(10);
    for (const t of own) {
      const g = through.get(`fs__${t.name}`);
      expect(g, t.name).toBeDefined();
      expect({ title: g!.title, annotations: g!.annotations }, t.name).toEqual({
        title: t.title,
        annotations: t.annotations,
      });
    }
  });

  it('does not claim a tool is read-only because a person classified it as a read', async () => {
    // create_directory says readOnlyHint: false; a person marks it a read: the desk runs it, the listing keeps its word
    const before = await direct();
    const created = before.find((t) => t.name === 'create_directory')!;
    await u.ok('POST', 'upstreams/fs/review', { read: ['create_directory'] });
    const client = await u.mcp();
    const listed = ((await client.listTools()).tools as Listed[]).find((t) => t.name === 'fs__create_directory')!;
    await client.close();
    expect(listed.annotations).toEqual(created.annotations);
  });
});
