import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamView } from '../../main/contract/upstreams.ts';
import { filesContaining } from '../cli/cli-harness.ts';
import { freePort } from '../plugins/upstream/everything-http.ts';
import {
  EVERYTHING,
  REPO,
  startUpstreamWorld,
  textOf,
  type UpstreamWorld,
} from '../plugins/upstream/upstream-world.ts';
import { clientHomes, SECRET } from './client-homes.ts';
import { runClients } from './run-clients.ts';

/** `gatehouse clients import`: a client's servers become upstreams, with `upstreams add`'s consent, into a real licensed service. */
let u: UpstreamWorld;
beforeAll(async () => {
  u = await startUpstreamWorld();
}, 120_000);
afterAll(async () => u?.stop());
const home = clientHomes();

describe('gatehouse clients import', () => {
  it('dry run: what would run (command, args, env names), what stays and why; nothing started', async () => {
    const h = await home();
    const r = await runClients(h, u.w.svc.dataDir, ['import', 'cursor', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('user:everything  -> upstream everything');
    expect(r.stdout).toContain(`command: ${process.execPath}`);
    expect(r.stdout).toContain('env (names only): API_KEY, FROM_CLIENT');
    expect(r.stdout).toContain('kept as written (Gatehouse does not expand them): ${env:USER}');
    expect(r.stdout).toMatch(/user:per-workspace {2}skipped: stays in Cursor: uses \$\{workspaceFolder\}/);
    expect(r.stdout).toContain('user:old-sse  -> upstream old-sse');
    expect(r.stdout).toContain('url: http://127.0.0.1:9/sse (SSE)');
    expect(r.stdout).not.toContain(SECRET);
    expect(await u.ok<UpstreamView[]>('GET', 'upstreams')).toEqual([]);
  });

  it('without --yes and no terminal, nothing is started', async () => {
    const h = await home();
    const r = await runClients(h, u.w.svc.dataDir, ['import', 'cursor']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('run again with --yes');
    expect(await u.ok<UpstreamView[]>('GET', 'upstreams')).toEqual([]);
  });

  it("imports each server with its progress as it goes; one's failure does not stop the rest; its tools answer through the gateway", async () => {
    const h = await home();
    const seen: string[] = [];
    const r = await runClients(
      h,
      u.w.svc.dataDir,
      ['import', 'cursor', '--server', 'everything', '--server', 'broken', '--server', 'also-everything', '--yes'],
      (line) => seen.push(line),
    );
    // Each pinned tool is listed under its server's line, with its class.
    const tools = seen.filter((l) => l.startsWith('    '));
    expect(tools).toContain('    everything__get-sum  read');
    expect(tools).toContain('    also-everything__get-sum  read');
    seen.splice(0, seen.length, ...seen.filter((l) => !l.startsWith('    ')));
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(1); // one failed
    // The plan (what will run) came before anything started.
    expect(r.stderr).toContain(`command: ${process.execPath}`);
    expect(seen[0]).toBe('user:everything: starting upstream everything and listing its tools...');
    expect(seen[1]).toMatch(/^user:everything: \d+ tools and \d+ prompts pinned \(upstream everything\)$/);
    expect(seen[2]).toBe('user:also-everything: starting upstream also-everything and listing its tools...');
    expect(seen[3]).toMatch(/^user:also-everything: \d+ tools .*pinned/);
    expect(seen[4]).toBe('user:broken: starting upstream broken and listing its tools...');
    expect(seen[5]).toMatch(
      /^user:broken: failed: upstream 'broken' could not be reached: command not found: \/nonexistent\/bin\/mcp-server-gone/,
    );
    expect(seen[6]).toBe('2 imported, 1 failed; point Cursor at Gatehouse: gatehouse clients connect cursor');
    expect(r.stderr).toContain(
      '1 of 3 servers could not be imported (see above); the others were [upstream_unavailable]',
    );

    const ups = await u.ok<UpstreamView[]>('GET', 'upstreams');
    expect(ups.map((x) => x.id).sort()).toEqual(['also-everything', 'everything']);
    expect(ups.find((x) => x.id === 'everything')).toMatchObject({
      kind: 'stdio',
      command: process.execPath,
      env_names: ['API_KEY', 'FROM_CLIENT'],
    });
    // The value went to the vault with the upstream: the process gets it, no file of ours names it but the vault.
    const client = await u.mcp();
    const env = textOf(await client.callTool({ name: 'everything__get-env', arguments: {} }));
    // The process has both; its echo of them is masked on the way to the agent (docs/secrets.md).
    expect(env).toContain('"API_KEY": "[redacted]"');
    expect(env).toContain('"FROM_CLIENT": "[redacted]"');
    expect(env).not.toContain(SECRET);
    // kept as written, never expanded
    expect((await filesContaining(u.w.svc.dataDir, '${env:USER}')).map((f) => f.slice(u.w.svc.dataDir.length))).toEqual(
      ['/vault.json'],
    );
    expect(textOf(await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } }))).toContain('5');
    await client.close();
    const holders = await filesContaining(u.w.svc.dataDir, SECRET);
    expect(holders.map((f) => f.slice(u.w.svc.dataDir.length))).toEqual(['/vault.json']);

    // list says which now go through Gatehouse.
    const list = await runClients(h, u.w.svc.dataDir, ['list', 'cursor']);
    expect(list.stdout).toMatch(/everything {2}stdio {2}imported as upstream everything/);
    expect(list.stdout).toMatch(/broken {2}stdio {2}not imported/);
    const listed = await runClients(h, u.w.svc.dataDir, ['list', '--json']);
    expect(listed.stdout).toContain('"env_names"');
    expect(listed.stdout).not.toContain(SECRET);

    // Again: imported already, and a clash with an existing id says how to choose another.
    const again = await runClients(h, u.w.svc.dataDir, ['import', 'cursor', '--server', 'everything', '--dry-run']);
    expect(again.stdout).toContain('skipped: imported already, as upstream everything');
    const codex = await runClients(h, u.w.svc.dataDir, ['import', 'codex', '--dry-run']);
    expect(codex.stdout).toContain(
      'user:everything  skipped: an upstream "everything" exists already: choose one with --as user:everything=ID',
    );
    const chosen = await runClients(h, u.w.svc.dataDir, ['import', 'codex', '--as', 'everything=codex-ev', '--yes']);
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(chosen.stdout).toMatch(/user:everything: \d+ tools .*pinned \(upstream codex-ev\)/);
    expect(chosen.stdout).toContain('1 imported, 0 failed');
    expect(await readFile(join(u.w.svc.dataDir, 'upstreams.json'), 'utf8')).not.toContain(SECRET);
    expect(await readFile(join(u.w.svc.dataDir, 'clients.json'), 'utf8')).not.toContain(SECRET);
  }, 120_000);

  it("an SSE server of Claude Code's project scope (.mcp.json in the current folder) becomes an SSE upstream that answers", async () => {
    const h = await home();
    const port = await freePort();
    const sse = spawn(process.execPath, [EVERYTHING, 'sse'], {
      env: { PATH: process.env.PATH, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        sse.stderr!.on('data', (c: Buffer) => c.toString().includes('Server is running on port') && resolve());
        sse.once('exit', (code) => reject(new Error(`server-everything sse exited ${code}`)));
      });
      await writeFile(
        join(h.project, '.mcp.json'),
        JSON.stringify({ mcpServers: { 'sse-ev': { type: 'sse', url: `http://127.0.0.1:${port}/sse` } } }),
      );
      const r = await runClients(h, u.w.svc.dataDir, ['import', 'claude-code', '--server', 'project:sse-ev', '--yes']);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/project:sse-ev: \d+ tools .*pinned \(upstream sse-ev\)/);
      expect(await u.ok('GET', 'upstreams/sse-ev')).toMatchObject({ kind: 'http', sse: true });
      const client = await u.mcp();
      expect(textOf(await client.callTool({ name: 'sse-ev__get-sum', arguments: { a: 40, b: 2 } }))).toContain('42');
      await client.close();
    } finally {
      sse.kill('SIGKILL');
    }
  }, 120_000);

  it('an entry that signs in with OAuth becomes an --oauth upstream waiting for its sign-in', async () => {
    const h = await home();
    const dry = await runClients(h, u.w.svc.dataDir, ['import', 'gemini', '--server', 'signin', '--dry-run']);
    expect(dry.stdout).toContain('headers (names only): -; signs in with OAuth');
    const r = await runClients(h, u.w.svc.dataDir, ['import', 'gemini', '--server', 'signin', '--yes']);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain(
      'user:signin: added as signin; sign in to list and pin its tools: gatehouse upstreams login signin',
    );
    expect(await u.ok('GET', 'upstreams/signin')).toMatchObject({ kind: 'http', oauth: { state: expect.any(String) } });
  });

  it('an unknown client or server name is bad usage', async () => {
    const h = await home();
    const r = await runClients(h, u.w.svc.dataDir, ['import', 'notepad']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown client 'notepad'");
    const s = await runClients(h, u.w.svc.dataDir, ['import', 'cursor', '--server', 'nope', '--dry-run']);
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('Cursor has no server named nope');
  });
});

describe('gatehouse clients import: sandbox grants', () => {
  // The service is shared with the tests above, which imported these under their own names.
  const fresh = ['--as', 'everything=g-ev', '--as', 'also-everything=g-also'];
  it('the consent shows each stdio server’s sandbox beside its command: what its command line suggests and what is typed, per server', async () => {
    const h = await home();
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-import-grant-'));
    const r = await runClients(h, u.w.svc.dataDir, [
      'import',
      'cursor',
      ...fresh,
      '--server',
      'everything',
      '--server',
      'also-everything',
      '--allow-write',
      `user:everything=${dir}`,
      '--allow-net',
      'everything=api.example.com',
      '--allow-read',
      'also-everything=~/docs',
      '--unconfined',
      'broken',
      '--server',
      'broken',
      '--dry-run',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const block = (name: string) => {
      const at = r.stdout.indexOf(`user:${name}  -> upstream`);
      const end = r.stdout.indexOf('\nuser:', at + 1);
      return r.stdout.slice(at, end === -1 ? undefined : end);
    };
    expect(block('everything')).toContain(`        read-write ${dir}\n`);
    expect(block('everything')).toContain('      network: only through Gatehouse, to:\n        api.example.com');
    expect(block('everything')).not.toContain('~/docs');
    expect(block('also-everything')).toContain('        read-only ~/docs\n');
    expect(block('also-everything')).toContain('      network: none');
    expect(block('broken')).toContain('    sandbox: UNCONFINED (you asked for it)');
    expect(block('everything')).toContain('    sandbox: confined');
    const json = await runClients(h, u.w.svc.dataDir, [
      'import',
      'cursor',
      ...fresh,
      '--server',
      'everything',
      '--allow-write',
      dir,
      '--dry-run',
      '--json',
    ]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).servers[0].sandbox).toEqual({
      unconfined: false,
      grants: [{ kind: 'write', value: dir, from: 'person' }],
    });
    expect((await u.ok<UpstreamView[]>('GET', 'upstreams')).map((x) => x.id)).not.toContain('g-ev');
  });

  it('a known stateful server is suggested one process per client; --per-client NAME imports it so', async () => {
    const h = await home();
    const memory = join(REPO, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
    await writeFile(
      join(h.home, '.cursor/mcp.json'),
      JSON.stringify({
        mcpServers: {
          memory: { command: process.execPath, args: [memory] },
          plain: { command: process.execPath, args: [EVERYTHING] },
        },
      }),
    );
    const dry = await runClients(h, u.w.svc.dataDir, ['import', 'cursor', '--as', 'memory=pc-mem', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      '    processes: one, shared by every client; suggested: it keeps a knowledge graph: every agent would read and write the same one; give it one process per client (process: "per-client") (--per-client user:memory)',
    );
    expect(dry.stdout).toMatch(/user:plain {2}-> upstream[^]*processes: one, shared by every client\n/);
    const r = await runClients(h, u.w.svc.dataDir, [
      'import',
      'cursor',
      '--server',
      'memory',
      '--as',
      'memory=pc-mem',
      '--per-client',
      '--unconfined',
      '--yes',
    ]);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    const stored = (await u.ok<UpstreamView[]>('GET', 'upstreams')).find((x) => x.id === 'pc-mem');
    expect(stored?.process).toMatchObject({ mode: 'per-client', max: 8, suggestion: null });
  });

  it('a runner’s registry is suggested and shown apart, as at upstreams add', async () => {
    const h = await home();
    await writeFile(
      join(h.home, '.cursor/mcp.json'),
      JSON.stringify({
        mcpServers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '~/notes'] } },
      }),
    );
    const r = await runClients(h, u.w.svc.dataDir, ['import', 'cursor', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('        read-write ~/notes  (from the command line)');
    expect(r.stdout).toContain('      network: none of its own');
    expect(r.stdout).toContain(
      '      package runner: npx (its own cache in its HOME), may reach registry.npmjs.org to fetch the package',
    );
  });

  it('a grant naming no stdio server of the import, or an unscoped one with several, is bad usage before anything runs', async () => {
    const h = await home();
    const many = ['import', 'cursor', ...fresh, '--server', 'everything', '--server', 'also-everything', '--yes'];
    const unscoped = await runClients(h, u.w.svc.dataDir, [...many, '--allow-write', '/srv/data']);
    expect(unscoped.code).toBe(2);
    expect(unscoped.stderr).toContain(
      '--allow-write /srv/data: 2 stdio servers are imported; say which, --allow-write NAME=/srv/data (stdio servers: user:everything, user:also-everything)',
    );
    const bare = await runClients(h, u.w.svc.dataDir, [...many, '--unconfined']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--unconfined: 2 stdio servers are imported; say which, --unconfined NAME');
    const other = await runClients(h, u.w.svc.dataDir, [...many, '--allow-net', 'broken=api.example.com']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(
      '--allow-net api.example.com: "broken" is not a stdio server this import starts (stdio servers: user:everything, user:also-everything)',
    );
    const remote = await runClients(h, u.w.svc.dataDir, [
      'import',
      'cursor',
      '--server',
      'old-sse',
      '--allow-net',
      'old-sse=api.example.com',
      '--yes',
    ]);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain('"old-sse" is not a stdio server this import starts (stdio servers: none)');
    const relative = await runClients(h, u.w.svc.dataDir, [...many, '--allow-write', 'everything=notes']);
    expect(relative.code).toBe(2);
    expect(relative.stderr).toContain(
      'user:everything: --allow-write notes: a granted folder is an absolute path (or ~/...)',
    );
    const connect = await runClients(h, u.w.svc.dataDir, ['connect', 'cursor', '--unconfined']);
    expect(connect.code).toBe(2);
    expect(connect.stderr).toContain(
      '--allow-write, --allow-read, --allow-net, --unconfined and --per-client are for clients import',
    );
    expect((await u.ok<UpstreamView[]>('GET', 'upstreams')).map((x) => x.id)).not.toContain('g-ev');
  });

  it('imported with grants: each server runs with its own, stored as the person’s; one server alone takes unscoped ones', async () => {
    const h = await home();
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-import-grant-'));
    const r = await runClients(h, u.w.svc.dataDir, [
      'import',
      'claude-desktop',
      '--as',
      'everything=cd-ev',
      '--allow-read',
      dir,
      '--allow-net',
      'localhost:9',
      '--yes',
    ]);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stderr).toContain(`        read-only ${dir}\n`);
    const up = await u.ok<UpstreamView>('GET', 'upstreams/cd-ev');
    expect(up.confinement).toMatchObject({
      state: 'confined',
      grants: [
        { kind: 'read', value: dir, from: 'person' },
        { kind: 'net', value: 'localhost:9', from: 'person' },
      ],
    });
    // It answers, confined with them.
    const client = await u.mcp();
    expect(textOf(await client.callTool({ name: 'cd-ev__get-sum', arguments: { a: 1, b: 2 } }))).toContain('3');
    await client.close();
  }, 120_000);
});
