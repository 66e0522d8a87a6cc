import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, ensureBundle } from './helpers/bundle.ts';

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
    for (const flag of ['--url', '--token-keychain', '--token-env', '--header', '--connect-timeout', '--log-level', '--log-file', '--data-dir', 'config --client']) expect(r.out).toContain(flag);
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
});
