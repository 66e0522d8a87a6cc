import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail } from '../../../../main/contract/upstreams.ts';
import {
  EVERYTHING,
  FILESYSTEM,
  REPO,
  startUpstreamWorld,
  textOf,
  until,
  type UpstreamWorld,
} from '../upstream-world.ts';

/**
 * The reference servers people start from their client configs, confined by
 * real bubblewrap, both ways a config starts them: the script itself
 * (`node .../dist/index.js`) and through the package runner (`npx -y PKG`).
 * server-memory keeps its graph in a file, which must land in the upstream's
 * own persistent HOME and be there again after a restart.
 *
 * Offline on purpose: the packages are this project's devDependencies, and
 * `npx` runs a package the project in its working folder has installed
 * without asking the registry. The service's working folder is the
 * repository here, so the npx upstreams are granted it read-only: that makes
 * it visible inside, and a visible working folder stays the server's working
 * folder (sandbox.ts). `npm_config_offline=true` makes any registry fetch
 * fail at once (ENOTCACHED) instead of going out through the registry grant
 * the runner is given, so this passes without the internet and fails loudly
 * if npx tried to download.
 */

const MEMORY = `${REPO}node_modules/@modelcontextprotocol/server-memory/dist/index.js`;
const REPO_DIR = REPO.replace(/\/$/, '');
const NPX_ENV = [
  { name: 'npm_config_offline', value: 'true' },
  { name: 'npm_config_update_notifier', value: 'false' },
];

let u: UpstreamWorld;
let client: Client;
let root: string;
let home: string;
let folder: string;

const call = async (tool: string, args: Record<string, unknown> = {}) => {
  const r = await client.callTool({ name: tool, arguments: args });
  return { error: !!r.isError, text: textOf(r) };
};
const detail = (id: string) => u.ok<UpstreamDetail>('GET', `upstreams/${id}`);
const privateHome = (id: string) => join(u.w.svc.dataDir, 'sandbox', id, 'home');
/** A new process: disabled (its process ends) and enabled again (a fresh one starts, confined the same way). */
async function restart(id: string) {
  const before = (await detail(id)).health.connected_at;
  await u.ok('POST', `upstreams/${id}/disable`, {});
  await u.ok('POST', `upstreams/${id}/enable`, {});
  await until(
    async () => {
      const h = (await detail(id)).health;
      return h.status === 'connected' && h.connected_at !== before;
    },
    30_000,
    `${id} to start again`,
  );
}
async function add(id: string, transport: Record<string, unknown>, read: string[]) {
  await u.ok('POST', 'upstreams', { id, transport: { kind: 'stdio', ...transport }, read });
  const d = await detail(id);
  expect(d.confinement?.state, d.health.last_error ?? '').toBe('confined');
  expect(d.confinement?.backend).toBe('bubblewrap');
  return d;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'gh-real-servers-'));
  home = join(root, 'home');
  folder = join(home, 'notes');
  await mkdir(join(home, '.ssh'), { recursive: true });
  await mkdir(folder, { recursive: true });
  await writeFile(join(home, '.ssh', 'id_rsa'), 'not for servers');
  await writeFile(join(folder, 'todo.txt'), 'water the plants');
  u = await startUpstreamWorld({ sandboxHome: home });
  client = await u.mcp();
}, 120_000);
afterAll(async () => {
  await client?.close();
  await u?.stop();
  await rm(root, { recursive: true, force: true });
});

const MEMORY_TOOLS = ['create_entities', 'read_graph'];
const entity = (name: string) => ({
  entities: [{ name, entityType: 'plant', observations: ['needs water on Mondays'] }],
});

describe('server-memory, confined', () => {
  it('directly: its graph file is in its own persistent HOME, and is read back after a restart', async () => {
    // Its documented way to choose the file; HOME inside is the upstream's own HOME, mounted at your HOME's path.
    await add(
      'mem',
      {
        command: process.execPath,
        args: [MEMORY],
        env: [{ name: 'MEMORY_FILE_PATH', value: join(home, 'memory.jsonl') }],
      },
      MEMORY_TOOLS,
    );
    expect((await call('mem__create_entities', entity('fern'))).error).toBe(false);
    const kept = join(privateHome('mem'), 'memory.jsonl');
    expect(await readFile(kept, 'utf8')).toContain('"fern"');
    expect(existsSync(join(home, 'memory.jsonl'))).toBe(false);

    await restart('mem');
    const graph = await call('mem__read_graph');
    expect(graph.error).toBe(false);
    expect(graph.text).toContain('fern');
    expect(graph.text).toContain('needs water on Mondays');
  }, 60_000);

  it('directly, with its default file next to its script: the write is refused (its package is read-only) and its log says so', async () => {
    await add('mem-ro', { command: process.execPath, args: [MEMORY] }, MEMORY_TOOLS);
    const r = await call('mem-ro__create_entities', entity('moss'));
    expect(r.error).toBe(true);
    expect(r.text).toMatch(/EROFS|read-only/i);
    const script = join(dirname(MEMORY), 'memory.jsonl');
    expect(existsSync(script)).toBe(false);
    // It prints nothing; its answer names the file (written beside it through a temporary file), and its log says why.
    const line = `gatehouse sandbox: refused a write to ${script}.`;
    const why = '(read-only for this server; grant a folder with --allow-write DIR) (its answer to create_entities)';
    await until(
      async () => (await detail('mem-ro')).stderr.some((l) => l.startsWith(line) && l.endsWith(why)),
      10_000,
      'the refusal in its log',
    );
  }, 60_000);

  it('through npx -y: it answers, its runner keeps its cache in the upstream’s HOME, and the graph survives a restart', async () => {
    const d = await add(
      'mem-npx',
      {
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-memory'],
        env: [...NPX_ENV, { name: 'MEMORY_FILE_PATH', value: join(home, 'memory.jsonl') }],
        sandbox: { read: [REPO_DIR] },
      },
      MEMORY_TOOLS,
    );
    // The runner is shown at consent, its registry apart from the server's own grants.
    expect(d.confinement!.runner).toEqual({ name: 'npx', registry: 'registry.npmjs.org' });
    expect(d.confinement!.grants).toContainEqual({ kind: 'net', value: 'registry.npmjs.org', from: 'runner' });
    expect((await call('mem-npx__create_entities', entity('ivy'))).error).toBe(false);
    expect(await readFile(join(privateHome('mem-npx'), 'memory.jsonl'), 'utf8')).toContain('"ivy"');
    // npm's own folder (logs, cache) is in the upstream's HOME, never the person's.
    expect(existsSync(join(privateHome('mem-npx'), '.npm'))).toBe(true);
    expect(existsSync(join(home, '.npm'))).toBe(false);

    await restart('mem-npx');
    expect((await call('mem-npx__read_graph')).text).toContain('ivy');
  }, 60_000);
});

describe('server-everything, confined', () => {
  it('directly and through npx -y, each answers a tool call', async () => {
    await add('ev', { command: process.execPath, args: [EVERYTHING, 'stdio'] }, ['get-sum']);
    expect((await call('ev__get-sum', { a: 2, b: 40 })).text).toContain('42');
    await add(
      'ev-npx',
      {
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-everything', 'stdio'],
        env: NPX_ENV,
        sandbox: { read: [REPO_DIR] },
      },
      ['get-sum'],
    );
    expect((await call('ev-npx__get-sum', { a: 5, b: 6 })).text).toContain('11');
  }, 60_000);
});

describe('server-filesystem, confined', () => {
  it('directly and through npx -y: its folder argument is its grant; it reads and writes there, and HOME stays hidden', async () => {
    const tools = ['read_text_file', 'write_file', 'list_directory'];
    await add('fsd', { command: process.execPath, args: [FILESYSTEM, folder] }, tools);
    const fsNpx = await add(
      'fs-npx',
      {
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-filesystem', folder],
        env: NPX_ENV,
        sandbox: { read: [REPO_DIR] },
      },
      tools,
    );
    expect(fsNpx.confinement!.grants).toContainEqual({ kind: 'write', value: folder, from: 'command_line' });
    for (const id of ['fsd', 'fs-npx']) {
      expect((await call(`${id}__read_text_file`, { path: join(folder, 'todo.txt') })).text).toBe('water the plants');
      expect((await call(`${id}__write_file`, { path: join(folder, `${id}.txt`), content: id })).error).toBe(false);
      expect(await readFile(join(folder, `${id}.txt`), 'utf8')).toBe(id);
      const key = await call(`${id}__read_text_file`, { path: join(home, '.ssh', 'id_rsa') });
      expect(key.error).toBe(true);
      expect(key.text).not.toContain('not for servers');
    }
  }, 60_000);
});
