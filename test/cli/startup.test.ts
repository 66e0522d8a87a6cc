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
