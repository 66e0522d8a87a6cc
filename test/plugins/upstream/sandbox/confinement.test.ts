import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail } from '../../../../main/contract/upstreams.ts';
import {
  FILESYSTEM,
  HOSTILE_UPSTREAM,
  startUpstreamWorld,
  textOf,
  until,
  type UpstreamWorld,
} from '../upstream-world.ts';

/**
 * Real bubblewrap, a real service, the real SDK client: a hostile stdio server
 * in a temporary HOME with a planted key, next to a vault file, tries what a
 * poisoned package would. Everything it was not granted fails, what it was
 * granted works, and each refusal is in its log.
 */

let u: UpstreamWorld;
let client: Client;
let root: string;
let home: string;
let grant: string;
let outside: string;
let granted: Server;
let other: Server;
const KEY = '-----BEGIN FAKE KEY----- sandbox-test-key-7d1e';
const majorOf = (bin: string): number =>
  Number(spawnSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.split('.')[0]);
const nodeOf = (wanted: (major: number) => boolean, ...bins: string[]): string | undefined =>
  bins.find((b) => existsSync(b) && wanted(majorOf(b)));
/** A Node 22+ (the one running the tests, or setup's): its fetch follows a proxy with NODE_USE_ENV_PROXY. */
const NODE22 =
  process.env.GATEHOUSE_TEST_NODE22 ??
  nodeOf((m) => m >= 22, process.execPath, '/usr/local/bin/node', '/tmp/nodetest/bin/node');
/** A Node 20, where the machine still has one (Debian's): its fetch ignores the proxy variables. */
const NODE20 = nodeOf((m) => m === 20, process.execPath, '/usr/bin/node');
const port = (s: Server) => (s.address() as AddressInfo).port;
const listen = (body: string) =>
  new Promise<Server>((resolve) => {
    const s = createServer((_, res) => res.end(body));
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
const call = async (name: string, args: Record<string, unknown>) =>
  textOf(await client.callTool({ name: `h__${name}`, arguments: args }));
const log = async (id = 'h') => (await u.ok<UpstreamDetail>('GET', `upstreams/${id}`)).stderr.join('\n');

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'gh-sandbox-'));
  home = join(root, 'home');
  grant = join(home, 'notes');
  outside = join(root, 'outside');
  await mkdir(join(home, '.ssh'), { recursive: true });
  await mkdir(grant, { recursive: true });
  await mkdir(outside);
  await writeFile(join(home, '.ssh', 'id_rsa'), KEY);
  granted = await listen('hello from the granted host');
  other = await listen('should never be seen');
  u = await startUpstreamWorld({ sandboxHome: home });
  await u.ok('POST', 'upstreams', {
    id: 'h',
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [HOSTILE_UPSTREAM],
      sandbox: { write: [grant], net: [`localhost:${port(granted)}`] },
    },
    // Everything is a read here: the test is the sandbox, not the desk.
    read: ['read', 'write', 'connect', 'fetch', 'fetch_env'],
  });
  client = await u.mcp();
}, 120_000);

afterAll(async () => {
  await client?.close();
  await u?.stop();
  granted?.close();
  other?.close();
  await rm(root, { recursive: true, force: true });
});

describe('a hostile stdio server, confined', () => {
  it('runs confined by bubblewrap, and says so with its grants', async () => {
    const d = await u.ok<UpstreamDetail>('GET', 'upstreams/h');
    expect(d.health.status).toBe('connected');
    expect(d.confinement).toMatchObject({ state: 'confined', backend: 'bubblewrap' });
    expect(d.confinement!.grants).toEqual([
      { kind: 'write', value: grant, from: 'person' },
      { kind: 'net', value: `localhost:${port(granted)}`, from: 'person' },
    ]);
  });

  it("cannot read the person's key: it is absent, and the log says why", async () => {
    const key = join(home, '.ssh', 'id_rsa');
    expect(await call('read', { path: key })).toBe('error ENOENT');
    expect(await call('read', { path: join(home, '.ssh') })).toMatch(/^error (ENOENT|EISDIR)/);
    await until(async () =>
      (await log()).includes(`gatehouse sandbox: ${key} is outside what this server was granted`),
    );
  });

  it("cannot read the vault in Gatehouse's data dir", async () => {
    const vault = join(u.w.svc.dataDir, 'vault.json');
    expect((await stat(vault)).isFile()).toBe(true);
    expect(await call('read', { path: vault })).toBe('error ENOENT');
    expect(await call('read', { path: join(u.w.svc.dataDir, 'upstreams.json') })).toBe('error ENOENT');
    await until(async () => (await log()).includes(`gatehouse sandbox: ${vault} is outside`));
  });

  it('cannot write outside its grant (a host folder, the system); writes inside it', async () => {
    const out = join(outside, 'pwn.txt');
    expect(await call('write', { path: out, text: 'x' })).toBe('error ENOENT');
    await expect(stat(out)).rejects.toThrow(/ENOENT/);
    expect(await call('write', { path: '/usr/pwn.txt', text: 'x' })).toBe('error EROFS');
    await until(async () => (await log()).includes(`gatehouse sandbox: ${out} is outside`));
    await until(async () => (await log()).includes('gatehouse sandbox: refused a write to /usr/pwn.txt'));
    expect(await call('write', { path: join(grant, 'ok.txt'), text: 'inside' })).toBe('ok');
    expect(await readFile(join(grant, 'ok.txt'), 'utf8')).toBe('inside');
  });

  it('has its own HOME: what it writes there stays there, the real one is untouched', async () => {
    expect(await call('write', { path: join(home, 'dropped.txt'), text: 'x' })).toBe('ok');
    await expect(stat(join(home, 'dropped.txt'))).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(u.w.svc.dataDir, 'sandbox', 'h', 'home', 'dropped.txt'), 'utf8')).toBe('x');
  });

  it('cannot connect to a loopback port, granted or not: its namespace has only its own loopback', async () => {
    expect(await call('connect', { port: port(other) })).toBe('error ECONNREFUSED');
    expect(await call('connect', { port: port(granted) })).toBe('error ECONNREFUSED');
    await until(async () => (await log()).includes(`refused a direct connection to 127.0.0.1:${port(other)}`));
  });

  it('fetches the granted host through its proxy; another port is refused there, and logged', async () => {
    expect(await call('fetch', { url: `http://localhost:${port(granted)}/` })).toBe('200 hello from the granted host');
    const refused = await call('fetch', { url: `http://localhost:${port(other)}/` });
    expect(refused).toMatch(/^403 Gatehouse: localhost:\d+ is not granted to this server/);
    expect(refused).not.toContain('should never be seen');
    await until(async () =>
      (await log()).includes(`gatehouse sandbox: refused a connection to localhost:${port(other)} (not granted)`),
    );
  });

  it.skipIf(!NODE20)("Node 20's fetch ignores the proxy: refused, never let through (docs/upstreams.md)", async () => {
    await u.ok('POST', 'upstreams', {
      id: 'h20',
      transport: {
        kind: 'stdio',
        command: NODE20,
        args: [HOSTILE_UPSTREAM],
        sandbox: { net: [`localhost:${port(granted)}`] },
      },
      read: ['fetch_env'],
    });
    const r = await client.callTool({
      name: 'h20__fetch_env',
      arguments: { url: `http://localhost:${port(granted)}/` },
    });
    expect(textOf(r)).toBe('error ECONNREFUSED');
  });

  it.skipIf(!NODE22)(
    "Node 22's fetch follows the proxy (NODE_USE_ENV_PROXY), its runtime mounted from outside /usr",
    async () => {
      await u.ok('POST', 'upstreams', {
        id: 'h22',
        transport: {
          kind: 'stdio',
          command: NODE22,
          args: [HOSTILE_UPSTREAM],
          sandbox: { net: [`localhost:${port(granted)}`] },
        },
        read: ['fetch_env'],
      });
      const r = await client.callTool({
        name: 'h22__fetch_env',
        arguments: { url: `http://localhost:${port(granted)}/` },
      });
      expect(textOf(r)).toBe('200 hello from the granted host');
      const refused = await client.callTool({
        name: 'h22__fetch_env',
        arguments: { url: `http://localhost:${port(other)}/` },
      });
      expect(textOf(refused)).not.toContain('should never be seen');
      await until(async () => (await log('h22')).includes(`refused a connection to localhost:${port(other)}`));
    },
  );

  it('changing its grants is audited and restarts it with them', async () => {
    const d = await u.ok<UpstreamDetail>('POST', 'upstreams/h/grant', { id: 'h', write: [grant, outside] });
    expect(d.confinement!.grants.map((g) => g.value)).toEqual([grant, outside]);
    const entries = await u.ok<{ entries: Array<{ tool: string; reason: string; principal: unknown }> }>(
      'GET',
      'audit?plugin=h',
    );
    const changed = entries.entries.find((e) => e.tool === 'upstreams.grant');
    expect(changed?.reason).toBe(`confined: write ${grant}; write ${outside}`);
    expect(entries.entries.find((e) => e.tool === 'upstreams.add')?.reason).toContain(`net localhost:${port(granted)}`);
    const out = join(outside, 'now.txt');
    await until(async () => (await call('write', { path: out, text: 'granted now' })) === 'ok', 20_000, 'restart');
    expect(await readFile(out, 'utf8')).toBe('granted now');
    // The network grant was dropped with the new set: nothing reaches the proxy any more.
    expect(await call('fetch', { url: `http://localhost:${port(granted)}/` })).toBe('error no HTTP_PROXY');
  });
});

describe('server-filesystem, confined through the gateway', () => {
  it('works in its granted folder and cannot see the rest of HOME although it was given HOME', async () => {
    await writeFile(join(grant, 'note.txt'), 'a note');
    await u.ok('POST', 'upstreams', {
      id: 'fs',
      // It is given HOME too; the sandbox grants only the folder (no suggestions: HOME would be one).
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [FILESYSTEM, grant, home],
        sandbox: { write: [grant], suggest: false },
      },
    });
    const d = await u.ok<UpstreamDetail>('GET', 'upstreams/fs');
    expect(d.confinement).toMatchObject({
      state: 'confined',
      grants: [{ kind: 'write', value: grant, from: 'person' }],
    });
    const fs = (name: string, args: Record<string, unknown>) =>
      client.callTool({ name: `fs__${name}`, arguments: args });
    expect(textOf(await fs('read_text_file', { path: join(grant, 'note.txt') }))).toBe('a note');
    expect(textOf(await fs('list_directory', { path: home }))).not.toContain('.ssh');
    const key = await fs('read_text_file', { path: join(home, '.ssh', 'id_rsa') });
    expect(key.isError).toBe(true);
    expect(textOf(key)).not.toContain(KEY);
  });

  it('suggests its folder arguments as write grants', async () => {
    await u.ok('POST', 'upstreams', {
      id: 'fs2',
      transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, grant] },
    });
    const d = await u.ok<UpstreamDetail>('GET', 'upstreams/fs2');
    expect(d.confinement!.grants).toEqual([{ kind: 'write', value: grant, from: 'command_line' }]);
    expect(d.health.status).toBe('connected');
  });
});

describe('when the sandbox cannot start', () => {
  it('a missing granted folder leaves it unstarted with the reason, never unconfined', async () => {
    const missing = join(root, 'missing');
    const r = await u.w.admin('POST', 'upstreams', {
      id: 'gone',
      transport: { kind: 'stdio', command: process.execPath, args: [HOSTILE_UPSTREAM], sandbox: { write: [missing] } },
    });
    expect(r.body).toMatchObject({ ok: false, code: 'upstream_unavailable' });
    expect(r.body.message).toContain(`the granted folder ${missing} does not exist`);
  });

  it("refuses a grant of the whole file system or of the host's /run, /proc, /dev", async () => {
    for (const bad of ['/', '/run', '/proc/self', '/dev']) {
      const r = await u.w.admin('POST', 'upstreams', {
        id: 'wide',
        transport: { kind: 'stdio', command: process.execPath, args: [HOSTILE_UPSTREAM], sandbox: { write: [bad] } },
      });
      expect(r.body, bad).toMatchObject({ ok: false, code: 'upstream_unavailable' });
      expect(r.body.message).toContain(`${bad} cannot be granted`);
    }
  });
});

describe('unconfined by a person', () => {
  it('runs with all of the rights, and says so in its view and in a health warning that stays', async () => {
    await u.ok('POST', 'upstreams', {
      id: 'free',
      transport: { kind: 'stdio', command: process.execPath, args: [HOSTILE_UPSTREAM], sandbox: { unconfined: true } },
      read: ['read'],
    });
    const d = await u.ok<UpstreamDetail>('GET', 'upstreams/free');
    expect(d.confinement).toMatchObject({ state: 'unconfined', backend: null });
    expect(d.confinement!.why).toMatch(/a person chose to run it without the sandbox/);
    // Unconfined is what it says: the planted key is readable (this is why it is a warning).
    expect(
      textOf(await client.callTool({ name: 'free__read', arguments: { path: join(home, '.ssh', 'id_rsa') } })),
    ).toBe(`ok ${KEY}`);
    const warnings = async () =>
      (await u.ok<{ warnings: Array<{ code: string; message: string }> }>('GET', 'health')).warnings;
    expect(await warnings()).toContainEqual({
      code: 'upstream_unconfined',
      message: expect.stringMatching(/^Upstream free runs unconfined: a person chose/),
    });
    await u.ok('POST', 'upstreams/free/grant', { id: 'free' });
    expect((await warnings()).map((w) => w.code)).not.toContain('upstream_unconfined');
  });
});
