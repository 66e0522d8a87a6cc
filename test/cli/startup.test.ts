import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CLI_BUNDLE, REMOTE_BUNDLE } from '../../main/cli/build.ts';
import { ensureCliBundle } from '../bridge/helpers/bundle.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { emptyUpstreams, UpstreamsData } from '../../main/plugins/upstream/upstream-data.ts';
import { JsonFileStore } from '../../main/store/json-file-store.ts';
import { TEST_UPSTREAM } from '../plugins/upstream/upstream-world.ts';
import { digestFileOf, schemaFingerprint } from '../../main/store/trusted-digest.ts';
import { filesWith, staticImports } from '../helpers/bundle-graph.ts';
import { describe, expect, it, vi } from 'vitest';
import { connectClient } from '../helpers/service.ts';
import { cleanedUp, REPO, runCli } from './cli-harness.ts';

// The start-up path of `gatehouse`: the file-vault warning is said where it
// matters (serve, and the health report the console shows), not by every
// command. Speed and memory are measured in test/bench/startup-bench.ts.

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const scope = cleanedUp();

// No Secret Service reachable: `--vault auto` falls back to the file vault, as on a headless server.
const NO_KEYCHAIN = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/gatehouse-test-bus' };
const WARNING = /vault: file \(not encrypted\)/;

describe('the file-vault warning', () => {
  it('is printed by serve, and by no CLI command, with or without a service running', async () => {
    const dir = await scope.dir();
    const auto = ['--data-dir', dir, '--vault', 'auto'];

    const direct = await runCli(['tokens', 'list', ...auto], NO_KEYCHAIN);
    expect(direct.code, direct.stderr).toBe(0);
    expect(direct.stderr).not.toMatch(WARNING);

    const svc = await scope.serve(dir, [], NO_KEYCHAIN, ['--vault', 'auto']);
    expect(svc.info.vault).toBe('file (not encrypted)');
    expect(svc.stderr().match(new RegExp(WARNING.source, 'g'))).toHaveLength(1);

    const viaService = await runCli(['settings', 'get', 'enabled', ...auto], NO_KEYCHAIN);
    expect(viaService.code, viaService.stderr).toBe(0);
    expect(viaService.stdout.trim()).toBe('true');
    expect(viaService.stderr).not.toMatch(WARNING);
  });
});

describe('commands that need nothing of the service', () => {
  it('--version and --help answer without opening a data dir', async () => {
    const version = await runCli(['--version'], { GATEHOUSE_DATA_DIR: '/nonexistent/never-created' });
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('serve [--host 127.0.0.1] [--port 7823|0]');
  });

  it('a reader that went away ends the command as SIGPIPE would (141), with no stack trace', async () => {
    await ensureCliBundle();
    for (const args of [['--version'], ['--help']]) {
      // The read end is closed before the child can write a byte: its write fails with EPIPE.
      const child = spawn(process.execPath, [join(REPO, 'bin/gatehouse.cjs'), ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect({ args, code, stderr }).toEqual({ args, code: 141, stderr: '' });
    }
  });

  it("the command's entry (what --version and --help run) imports no zod: each command loads its own code", async () => {
    await ensureCliBundle();
    const graph = staticImports(CLI_BUNDLE);
    expect(graph.size).toBeGreaterThan(2);
    const zod = filesWith(graph, /^\/\/ node_modules\/zod\//m);
    expect(zod).toEqual([]);
  });

  it('tokens, users, settings, staged, status and policy sent to a running service import no zod either (docs/architecture.md, Start-up)', async () => {
    await ensureCliBundle();
    const entry = readFileSync(CLI_BUNDLE, 'utf8');
    const chunk = (command: string) => {
      const m = new RegExp(`import\\("(\\./chunks/${command}-commands-[A-Z0-9]+\\.mjs)"\\)`).exec(entry);
      expect(m, `the entry imports the ${command} commands' chunk`).not.toBeNull();
      return join(dirname(CLI_BUNDLE), m![1]!);
    };
    // Only what loads before a dynamic import: the whole core without a service, and the contract's check of
    // another version's answer, are imported where they are needed.
    const graph = staticImports(
      CLI_BUNDLE,
      chunk('admin'),
      chunk('users'),
      chunk('settings'),
      chunk('review'),
      chunk('policy'),
    );
    // The walk sees the request's route table and the runtime file, so a zod module on the path would be seen.
    expect(filesWith(graph, /^\/\/ main\/contract\/action-routes\.ts/m)).toHaveLength(1);
    expect(filesWith(graph, /^\/\/ main\/store\/runtime-file\.ts/m)).toHaveLength(1);
    expect(filesWith(graph, /^\/\/ node_modules\/zod\//m)).toEqual([]);
    // and the audit commands, which check a query with the contract's schema, do import it: the check can tell
    expect(filesWith(staticImports(chunk('audit')), /^\/\/ node_modules\/zod\//m)).not.toEqual([]);

    // The same commands' CommonJS build, which bin/gatehouse.cjs runs first, holds them and none of zod or the core.
    const remote = readFileSync(REMOTE_BUNDLE, 'utf8');
    for (const file of [
      'cli/admin-commands',
      'cli/users-commands',
      'cli/settings-commands',
      'cli/review-commands',
      'cli/policy-commands',
      'store/runtime-file',
    ])
      expect(remote).toContain(`// main/${file}.ts`);
    expect(remote).not.toMatch(/^\/\/ node_modules\/zod\//m);
    expect(remote).not.toMatch(/^\/\/ main\/(local-core|cli\/direct-connection|contract\/action-http)\.ts/m);
  });

  it('bin/gatehouse.cjs sends remote.cjs exactly the commands it holds', async () => {
    const { REMOTE } = await import('../../main/cli/remote-main.ts');
    const bin = readFileSync(join(REPO, 'bin', 'gatehouse.cjs'), 'utf8');
    const listed = /const REMOTE_COMMANDS = (\[[^\]]*\]);/.exec(bin)?.[1];
    expect(listed, 'the bin names its remote commands').toBeDefined();
    expect(JSON.parse(listed!.replaceAll("'", '"')).sort()).toEqual(Object.keys(REMOTE).sort());
  });
});

describe('what a command that starts no upstream loads', () => {
  it('neither asks the machine for its sandbox nor loads undici (node:http taken by require, not import)', async () => {
    const dir = await scope.dir();
    // A `bwrap` first on PATH that leaves a mark when run, and a preload that writes down, at exit, whether Node's undici was loaded.
    const bin = await scope.dir();
    await writeFile(join(bin, 'bwrap'), `#!/bin/sh\necho ran >> ${join(bin, 'bwrap-ran')}\necho bubblewrap 0.11.0\n`);
    await chmod(join(bin, 'bwrap'), 0o755);
    const report = join(bin, 'loaded.txt');
    await writeFile(
      join(bin, 'preload.cjs'),
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, String(process.moduleLoadList.some((m) => m.includes('undici')))));`,
    );
    const env = { PATH: `${bin}:${process.env.PATH}`, NODE_OPTIONS: `--require ${join(bin, 'preload.cjs')}` };
    // The two probes see what they look for (else the assertions below could not fail).
    expect(spawnSync('sh', ['-c', 'bwrap --version'], { env: { ...process.env, ...env } }).status).toBe(0);
    expect(await readFile(join(bin, 'bwrap-ran'), 'utf8')).toBe('ran\n');
    spawnSync(process.execPath, ['--input-type=module', '-e', "import 'node:http'"], {
      env: { ...process.env, ...env },
    });
    expect(await readFile(report, 'utf8')).toBe('true');

    await writeFile(join(bin, 'bwrap-ran'), '');
    const r = await runCli(['tokens', 'list', '--data-dir', dir, '--vault', 'file'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(bin, 'bwrap-ran'), 'utf8')).toBe('');
    expect(await readFile(report, 'utf8')).toBe('false');
  });

  it('with a stdio upstream stored, asks the machine for its sandbox only for a command that shows the upstream', async () => {
    const dir = await scope.dir();
    const add = await runCli([
      'upstreams',
      'add',
      'fx',
      '--stdio',
      '--data-dir',
      dir,
      '--vault',
      'file',
      '--',
      process.execPath,
      TEST_UPSTREAM,
    ]);
    expect(add.code, add.stderr).toBe(0);
    const bin = await scope.dir();
    const ran = join(bin, 'bwrap-ran');
    await writeFile(join(bin, 'bwrap'), `#!/bin/sh\necho ran >> ${ran}\necho bubblewrap 0.11.0\n`);
    await chmod(join(bin, 'bwrap'), 0o755);
    await writeFile(ran, '');
    const env = { PATH: `${bin}:${process.env.PATH}` };
    const args = ['--data-dir', dir, '--vault', 'file', '--json'];
    const tokens = await runCli(['tokens', 'list', ...args], env);
    expect(tokens.code, tokens.stderr).toBe(0);
    expect(await readFile(ran, 'utf8')).toBe('');
    // The views say how the upstream is confined, from the machine's answer (the stand-in's version), not "checking".
    const list = await runCli(['upstreams', 'list', ...args], env);
    expect(list.code, list.stderr).toBe(0);
    expect(await readFile(ran, 'utf8')).not.toBe('');
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({
        id: 'fx',
        confinement: expect.objectContaining({ state: 'confined', why: expect.stringContaining('bubblewrap 0.11.0') }),
      }),
    ]);
  });

  it("sent to a running service, starts no ES module loader and loads neither node:http's client, node:crypto nor worker_threads (docs/performance.md, Start-up)", async () => {
    const dir = await scope.dir();
    const bin = await scope.dir();
    const report = join(bin, 'loaded.json');
    await writeFile(
      join(bin, 'preload.cjs'),
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify(process.moduleLoadList)));`,
    );
    const env = { NODE_OPTIONS: `--require ${join(bin, 'preload.cjs')}` };
    const unwanted = [
      'NativeModule _http_client',
      'NativeModule crypto',
      'NativeModule worker_threads',
      'NativeModule internal/modules/esm/module_job',
    ];
    const loaded = async () =>
      (JSON.parse(await readFile(report, 'utf8')) as string[]).filter((m) => unwanted.includes(m));
    // The probe sees each module when it is loaded (else the assertions below could not fail).
    spawnSync(
      process.execPath,
      ['-e', "require('node:http').request; require('node:crypto'); require('node:worker_threads'); import('node:os')"],
      { env: { ...process.env, ...env } },
    );
    expect((await loaded()).sort()).toEqual([...unwanted].sort());

    await scope.serve(dir);
    const answers: string[] = [];
    for (const command of [
      ['tokens', 'list'],
      ['users', 'list'],
      ['settings', 'get', 'enabled'],
      ['staged', 'list'],
      ['status'],
      ['policy', 'show'],
    ]) {
      const r = await runCli([...command, '--data-dir', dir, '--vault', 'file'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(await loaded(), command.join(' ')).toEqual([]);
      answers.push(r.stdout);
    }
    // They asked the service: `status` says what the running service answered.
    expect(answers[4]).toMatch(/^Gatehouse \S+ is running/);
    // A refusal is read without the contract too, and said as the full build says it.
    const refused = await runCli(['tokens', 'revoke', 'tok_nope', '--json', '--data-dir', dir, '--vault', 'file'], env);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await loaded()).toEqual([]);

    // A service of another version (one left running across an upgrade): the full build runs the command and
    // checks the answers against this version's contract.
    const runtimeFile = join(dir, 'runtime.json');
    const runtime = JSON.parse(await readFile(runtimeFile, 'utf8')) as { version: string };
    await writeFile(runtimeFile, JSON.stringify({ ...runtime, version: '0.0.1-older' }));
    const older = await runCli(['tokens', 'list', '--json', '--data-dir', dir, '--vault', 'file'], env);
    expect(older.code, older.stderr).toBe(0);
    expect(JSON.parse(older.stdout)).toEqual([]);
    expect(await loaded()).toContain('NativeModule internal/modules/esm/module_job');
  });

  it('hands a command to the full build before sending anything when connect finds no service, or one of another version', async () => {
    await ensureCliBundle();
    const dir = await scope.dir();
    await scope.serve(dir);
    const bin = await scope.dir();
    // remote.cjs in a process of its own, beside a running service, where connect's read of runtime.json sees the
    // service gone or replaced by another version (it stopped, or was upgraded, as the command started).
    const script = join(bin, 'race.cjs');
    await writeFile(
      script,
      `const fs = require('node:fs');
const readFileSync = fs.readFileSync;
let reads = 0;
fs.readFileSync = (file, ...rest) => {
  const text = readFileSync(file, ...rest);
  if (!String(file).endsWith('runtime.json')) return text;
  reads++;
  if (process.env.RACE === 'gone') throw Object.assign(new Error('ENOENT: gone'), { code: 'ENOENT' });
  return JSON.stringify({ ...JSON.parse(text), version: '0.0.1-older' });
};
require(${JSON.stringify(REMOTE_BUNDLE)})
  .remoteMain(['tokens', 'create', '--label', 'race-' + process.env.RACE, '--data-dir', ${JSON.stringify(dir)}, '--vault', 'file'])
  .then((code) => process.stdout.write('handed over: ' + (code === undefined) + ', runtime reads: ' + reads));`,
    );
    for (const race of ['gone', 'older']) {
      const r = spawnSync(process.execPath, [script], { env: { ...process.env, RACE: race }, encoding: 'utf8' });
      expect({ race, stdout: r.stdout, stderr: r.stderr }).toEqual({
        race,
        stdout: 'handed over: true, runtime reads: 1',
        stderr: '',
      });
    }
    // Nothing was sent: neither token was made.
    const listed = await runCli(['tokens', 'list', '--json', '--data-dir', dir, '--vault', 'file']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });

  it("trusts the upstreams file the service wrote without converting its schema: the build's fingerprint is the source's", async () => {
    await ensureCliBundle();
    const fingerprint = schemaFingerprint(UpstreamsData);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    // The bundle carries the hash (main/cli/build.ts builtFingerprints), so a trusted open builds none of the schema.
    const chunks = join(dirname(CLI_BUNDLE), 'chunks');
    const holding = readdirSync(chunks).filter((f) => readFileSync(join(chunks, f), 'utf8').includes(fingerprint!));
    expect(holding).toHaveLength(1);
    // What the source writes (as the service does), the bundle takes as its own: it validates nothing and rewrites
    // no digest, which it would do with any other fingerprint.
    const dir = await scope.dir();
    await JsonFileStore.open({
      file: join(dir, 'upstreams.json'),
      schema: UpstreamsData,
      defaults: emptyUpstreams,
      log: silentLogger,
      trustOwnWrites: true,
      fingerprintName: 'upstreams',
    });
    const digest = digestFileOf(join(dir, 'upstreams.json'));
    const before = { ino: statSync(digest).ino, text: readFileSync(digest, 'utf8') };
    expect(JSON.parse(before.text)).toMatchObject({ schema: fingerprint });
    const r = await runCli(['tokens', 'list', '--json', '--data-dir', dir, '--vault', 'file']);
    expect(r.code, r.stderr).toBe(0);
    expect({ ino: statSync(digest).ino, text: readFileSync(digest, 'utf8') }).toEqual(before);
  });

  it('runs policy check and set, which read their input before connecting, in the full build', async () => {
    const { remoteMain } = await import('../../main/cli/remote-main.ts');
    const dir = await scope.dir();
    for (const sub of ['check', 'set'])
      expect(await remoteMain(['policy', sub, '-', '--data-dir', dir, '--vault', 'file'])).toBeUndefined();
  });
});

describe('gatehouse audit list', () => {
  it('shows who acted by login, not by user id', async () => {
    const dir = await scope.dir();
    const svc = await scope.serve(dir);
    const created = await runCli([
      'tokens',
      'create',
      '--label',
      'audit-list',
      '--json',
      '--data-dir',
      dir,
      '--vault',
      'file',
    ]);
    const { token, record } = JSON.parse(created.stdout) as { token: string; record: { user_id: string } };
    const client = await connectClient(svc.info.mcp_url, token);
    await client.callTool({ name: 'site_identity', arguments: {} });
    await client.close();
    const listed = await runCli(['audit', 'list', '--tool', 'site_identity', '--data-dir', dir, '--vault', 'file']);
    expect(listed.code, listed.stderr).toBe(0);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/\bUSER\b/);
    expect(header).not.toContain('USER_ID');
    // the USER column holds the token's user's login (a token made without --user acts as agent), right before the token preview
    expect(row).toMatch(/\sagent\s+gth_…/);
    expect(row).not.toContain(record.user_id);
  });
});
