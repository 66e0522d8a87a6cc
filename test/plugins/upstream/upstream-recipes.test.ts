import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditPage } from '../../../main/contract/audit.ts';
import { PreviewRecipe, type RecipeView } from '../../../main/contract/preview-recipes.ts';
import type { StagedView } from '../../../main/contract/staged.ts';
import { SHIPPED_RECIPES } from '../../../main/plugins/upstream/preview-recipes.ts';
import { FILESYSTEM, REPO, startUpstreamWorld, textOf, type UpstreamWorld } from './upstream-world.ts';

/**
 * A person's own preview recipes (docs/staging.md, "Recipes of your own"), through the admin API the console
 * and the CLI use, against the real server-filesystem and server-memory: checked against the pinned
 * definitions when saved (reads only, real input names), audited, used at the next staging in place of a
 * shipped one, dropped while a read it names is not a read any more.
 */
let u: UpstreamWorld;
let client: Client;
let dir: string;

const stage = async (name: string, args: Record<string, unknown>) => {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: { staged_id?: string };
  };
  expect(r.isError, textOf(r as never)).toBeFalsy();
  return u.ok<StagedView>('GET', `staged/${r.structuredContent!.staged_id!}`);
};
const setRecipe = (id: string, recipe: unknown) => u.w.admin('POST', `upstreams/${id}/recipes`, { recipe });
const stateRecipe = {
  tool: 'write_file',
  shows: 'state',
  reads: [[{ tool: 'get_file_info', args: { path: 'path' }, label: 'file' }]],
};

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'gh-recipes-')));
  u = await startUpstreamWorld({ license: null });
  await u.ok('POST', 'upstreams', {
    id: 'fs',
    transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, dir] },
  });
  await u.ok('POST', 'upstreams', {
    id: 'mem',
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [`${REPO}node_modules/@modelcontextprotocol/server-memory/dist/index.js`],
      env: [{ name: 'MEMORY_FILE_PATH', value: join(dir, 'memory.jsonl') }],
      sandbox: { write: [dir] },
    },
  });
  client = await u.mcp();
}, 120_000);
afterAll(async () => {
  await client?.close();
  await u?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the recipes an upstream has', () => {
  it('every shipped recipe is one a person could have written (the contract takes it)', () => {
    for (const r of SHIPPED_RECIPES) expect(PreviewRecipe.safeParse(r).error, r.tool).toBeUndefined();
  });

  it("lists the shipped recipes of its own writes only, each in use; another server's are not shown", async () => {
    const views = await u.ok<RecipeView[]>('GET', 'upstreams/fs/recipes');
    expect(views.map((v) => [v.tool, v.source, v.problem])).toEqual([
      ['write_file', 'shipped', null],
      ['edit_file', 'shipped', null],
      ['move_file', 'shipped', null],
      ['create_directory', 'shipped', null],
    ]);
    expect((await u.ok<{ recipes: RecipeView[] }>('GET', 'upstreams/fs')).recipes).toEqual(views);
  });
});

describe('a recipe a person writes', () => {
  it('is refused with a clear reason when it reads with a write, names an input no tool has, or misses a field', async () => {
    const refused = async (id: string, recipe: unknown) => {
      const r = await setRecipe(id, recipe);
      expect(r.body, JSON.stringify(recipe)).toMatchObject({ ok: false, code: 'invalid_value' });
      return (r.body as { message: string }).message;
    };
    expect(
      await refused('fs', { ...stateRecipe, reads: [[{ tool: 'create_directory', args: { path: 'path' } }]] }),
    ).toBe(
      "the recipe for 'write_file' does not fit upstream 'fs': 'create_directory' is not classified as a read, and a preview calls only reads (mark it as a read first: gatehouse upstreams review ID --read create_directory)",
    );
    expect(await refused('fs', { ...stateRecipe, reads: [[{ tool: 'get_file_info', args: { file: 'path' } }]] })).toBe(
      "the recipe for 'write_file' does not fit upstream 'fs': 'get_file_info' has no input 'file' (its inputs: path)",
    );
    expect(await refused('fs', { ...stateRecipe, reads: [[{ tool: 'get_file_info', args: { path: 'where' } }]] })).toBe(
      "the recipe for 'write_file' does not fit upstream 'fs': 'write_file' has no input 'where' to give get_file_info's path (its inputs: path, content)",
    );
    expect(await refused('fs', { ...stateRecipe, tool: 'get_file_info' })).toMatch(
      /'get_file_info' is classified as a read: only writes are staged and previewed$/,
    );
    expect(await refused('fs', { ...stateRecipe, tool: 'no_such_tool' })).toMatch(
      /the upstream has no tool 'no_such_tool'$/,
    );
    expect(await refused('fs', { ...stateRecipe, shows: 'file_write' })).toMatch(
      /^upstreams\.recipe_set: recipe\.content: a file_write recipe names the write's content argument/,
    );
    expect(await refused('fs', { ...stateRecipe, reads: [[{ tool: 'get_file_info', args: { path: 'a[' } }]] })).toMatch(
      /an argument path is names joined by dots/,
    );
    // nothing refused was kept, nor audited
    expect((await u.ok<RecipeView[]>('GET', 'upstreams/fs/recipes')).every((v) => v.source === 'shipped')).toBe(true);
    expect((await u.ok<AuditPage>('GET', 'audit?tool=upstreams.recipe_set')).entries).toEqual([]);
  });

  it('takes the place of the shipped one at the next staging, audited; removed, the shipped one applies again', async () => {
    const file = join(dir, 'a.txt');
    await writeFile(file, 'old\n');
    const saved = await u.ok<RecipeView[]>('POST', 'upstreams/fs/recipes', { recipe: stateRecipe });
    expect(saved.find((v) => v.tool === 'write_file')).toMatchObject({
      source: 'person',
      overrides_shipped: true,
      problem: null,
    });
    const audit = await u.ok<AuditPage>('GET', 'audit?tool=upstreams.recipe_set');
    expect(audit.entries).toHaveLength(1);
    expect(audit.entries[0]).toMatchObject({
      result: 'ok',
      write: true,
      source_plugin: 'fs',
      target: 'fs__write_file',
      reason: 'write_file: state via get_file_info:path=path@file',
      principal: expect.objectContaining({ kind: 'person' }),
    });

    const mine = await stage('fs__write_file', { path: file, content: 'new\n' });
    expect(mine.preview.kind).toBe('arguments');
    expect(mine.preview.current!.states.map((s) => s.label)).toEqual(['file (get_file_info)']);
    expect(mine.preview.current!.states[0]!.text).toContain('size: 4');

    await u.ok('DELETE', 'upstreams/fs/recipes/write_file');
    const removed = await u.ok<AuditPage>('GET', 'audit?tool=upstreams.recipe_remove');
    expect(removed.entries[0]).toMatchObject({
      target: 'fs__write_file',
      reason: "write_file: the person's recipe removed, the shipped one applies again",
    });
    const shipped = await stage('fs__write_file', { path: file, content: 'new\n' });
    expect(shipped.preview.current!.summary).toBe('a.txt: 1 line changed');
    const again = await u.w.admin('DELETE', 'upstreams/fs/recipes/write_file');
    expect(again.body).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('previews a write no shipped recipe knows (server-memory create_entities: the entities as they are now)', async () => {
    await u.ok('POST', 'upstreams/mem/recipes', {
      recipe: {
        tool: 'create_entities',
        shows: 'state',
        reads: [[{ tool: 'open_nodes', args: { names: 'entities[*].name' }, label: 'entities' }]],
      },
    });
    const first = await stage('mem__create_entities', {
      entities: [{ name: 'Grace', entityType: 'person', observations: ['wrote a compiler'] }],
    });
    expect(first.preview.current!.states[0]!.label).toBe('entities (open_nodes)');
    expect(first.preview.current!.states[0]!.text).not.toContain('wrote a compiler');
    await u.ok('POST', `staged/${first.id}/confirm`);
    const second = await stage('mem__create_entities', {
      entities: [{ name: 'Grace', entityType: 'person', observations: ['sailed'] }],
    });
    expect(second.preview.current!.states[0]!.text).toContain('wrote a compiler');
  });

  it('is bound to the pinned definitions like a shipped one: a read marked a write drops it until marked a read again', async () => {
    await u.ok('POST', 'upstreams/fs/recipes', { recipe: stateRecipe });
    await u.ok('POST', 'upstreams/fs/review', { write: ['get_file_info'] });
    const views = await u.ok<RecipeView[]>('GET', 'upstreams/fs/recipes');
    expect(views.find((v) => v.tool === 'write_file')!.problem).toMatch(/^'get_file_info' is not classified as a read/);
    const dropped = await stage('fs__write_file', { path: join(dir, 'b.txt'), content: 'x' });
    expect(dropped.preview.current).toBeUndefined();
    expect(dropped.preview.kind).toBe('arguments');
    await u.ok('POST', 'upstreams/fs/review', { read: ['get_file_info'] });
    const back = await stage('fs__write_file', { path: join(dir, 'b.txt'), content: 'x' });
    expect(back.preview.current!.states.map((s) => s.label)).toEqual(['file (get_file_info)']);
    await u.ok('DELETE', 'upstreams/fs/recipes/write_file');
  });
});
