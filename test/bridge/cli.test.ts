import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, ensureBundle, ROOT } from './helpers/bundle.ts';

// The command line of the real bin: help, exit codes, and refusal of bad flags
// before anything starts.

beforeAll(ensureBundle);

function run(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', input: '', timeout: 20_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('gatehouse-bridge command line', () => {
  it('--help documents the flags and every exit code', () => {
    const r = run(['--help']);
    expect(r.code).toBe(0);
    for (const flag of [
      '--url',
      '--token-keychain',
      '--token-env',
      '--header',
      '--connect-timeout',
      '--log-level',
      '--log-file',
      '--data-dir',
      'config --client',
    ])
      expect(r.out).toContain(flag);
    expect(r.out).toMatch(/exit codes:\n\s+0 .*\n\s+1 .*\n\s+2 .*bad command line\n\s+3 .*\n\s+4 /);
  });

  it('--version prints the package version', () => {
    const r = run(['--version']);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--url', 'ftp://example.com/mcp'], /--url must be http:\/\/ or https:\/\//],
    [['--url', 'not a url'], /is not a URL/],
    [['--url', 'https://user:pw@example.com/mcp'], /must not carry a user name or password/],
    [['--token-env', 'A', '--token-keychain', 'b'], /either --token-keychain or --token-env/],
    [['--token-env', 'A', '--header', 'Authorization: Bearer x'], /conflicts with --token-keychain\/--token-env/],
    [['--header', 'Content-Type: text/plain'], /set by the bridge itself/],
    [['--connect-timeout', 'soon'], /--connect-timeout "soon" must be a number of seconds/],
    [['--log-level', 'loud'], /--log-level "loud" must be one of/],
    [['--vault', 'cloud'], /--vault "cloud" must be one of/],
    [['stray'], /unexpected argument "stray"/],
    [['config'], /config needs --client/],
    [['config', '--client', 'notepad'], /unknown --client "notepad"/],
    [['config', '--client', 'cursor', '--name', 'bad name'], /is not usable as a server name/],
  ])('refuses %j with exit 2, the reason and a usage line on stderr', (args, reason) => {
    const r = run(args);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(reason);
    expect(r.err).toContain('usage: gatehouse-bridge');
    expect(r.out).toBe('');
  });

  it('does not echo a malformed --header, which may be a bare secret', () => {
    const secret = 'gth_thisLooksLikeATokenWithoutAColon0123456789';
    const r = run(['--header', secret]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--header must look like "Name: value"');
    expect(r.err).not.toContain(secret);
  });

  it('without a bundle, the bin runs the TypeScript source through tsx', () => {
    // A checkout with no dist/: the bin, and the sources and packages it reaches.
    const tree = mkdtempSync(join(tmpdir(), 'gh-bridge-nodist-'));
    try {
      mkdirSync(join(tree, 'bin'));
      // the checkout's bin folder (the bin and the helpers beside it)
      for (const f of readdirSync(join(ROOT, 'bin'))) copyFileSync(join(ROOT, 'bin', f), join(tree, 'bin', f));
      for (const d of ['bridge', 'main', 'node_modules']) symlinkSync(join(ROOT, d), join(tree, d));
      copyFileSync(join(ROOT, 'package.json'), join(tree, 'package.json'));
      const r = spawnSync(process.execPath, [join(tree, 'bin', 'gatehouse-bridge.mjs'), '--bogus'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain("Unknown option '--bogus'");
      const v = spawnSync(process.execPath, [join(tree, 'bin', 'gatehouse-bridge.mjs'), '--version'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    } finally {
      // Links first, on their own: the removal must never reach the real folders behind them.
      for (const d of ['bridge', 'main', 'node_modules']) rmSync(join(tree, d), { force: true });
      rmSync(tree, { recursive: true, force: true });
    }
  });
});
