import { spawnSync } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CLI_BUNDLE } from '../../main/cli/build.ts';
import { ensureCliBundle } from '../bridge/helpers/bundle.ts';
import { describe, expect, it, vi } from 'vitest';
import { connectClient } from '../helpers/service.ts';
import { cleanedUp, runCli } from './cli-harness.ts';

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

  it("the command's entry (what --version and --help run) imports no zod: each command loads its own code", async () => {
    await ensureCliBundle();
    const seen = new Map<string, string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      const text = readFileSync(file, 'utf8');
      seen.set(file, text);
      for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s*"(\.\.?\/[^"]+)"|^import\s*"(\.\.?\/[^"]+)"/gm))
        visit(join(dirname(file), m[1] ?? m[2]!));
    };
    visit(CLI_BUNDLE);
    expect(seen.size).toBeGreaterThan(2);
    const zod = [...seen].filter(([, text]) => /^\/\/ node_modules\/zod\//m.test(text)).map(([file]) => file);
    expect(zod).toEqual([]);
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
