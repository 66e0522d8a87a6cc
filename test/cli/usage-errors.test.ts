import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mapLimit, removeDir, runCli, runCliHere, tempDataDir } from './cli-harness.ts';

// The child processes here take seconds each on a busy two-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

// Bad usage exits 2 with a usage line on stderr (or a JSON error with --json)
// and touches nothing: the data dir named on the command line is not even created.
// The long lists of cases run in this process (cli-harness.ts, runCliHere: the same
// `main`, its exit code as returned); one of each kind runs as a child process, for
// the exit status and the output the OS sees.

const USAGE_LINE = /\nUsage: gatehouse <command> \[options\] +\(gatehouse --help\)\n$/;

let parent: string;
let dataDir: string;
beforeAll(async () => {
  parent = await tempDataDir();
  dataDir = join(parent, 'never-created');
});
afterAll(async () => {
  await removeDir(parent);
});

const BAD: Array<[string[], RegExp]> = [
  [['frobnicate'], /unknown command 'frobnicate'/],
  [['tokens', 'list', '--bogus'], /Unknown option '--bogus'/],
  [['tokens', 'frob'], /unknown tokens command 'frob': use create, list or revoke/],
  [['tokens'], /tokens needs a command first: create, list or revoke/],
  [['settings', '--vault', 'file', 'get'], /settings needs a command first: get or set/],
  [['tokens', 'create'], /tokens create needs --label/],
  [['tokens', 'create', '--label'], /--label/],
  [['tokens', 'revoke'], /tokens revoke needs a token id/],
  [['users', 'add', 'carol'], /a role is needed/],
  [['users', 'add', '--role', 'editor'], /users add needs a login/],
  [['users', 'set-role', 'carol'], /a role is needed/],
  [['users', 'remove', 'carol'], /unknown users command 'remove': use list, add or set-role/],
  [['settings', 'set', 'rate_limit'], /settings set needs KEY and VALUE/],
  [['settings', 'set', 'rate_limit', '-5'], /Unknown option '-5'/],
  [['settings', 'reset'], /unknown settings command 'reset'/],
  [['staged', 'confirm'], /staged confirm needs a staged id/],
  [['staged', 'approve', 'stg_1'], /unknown staged command 'approve'/],
  [['audit', 'export', '--format', 'xml'], /--format is csv or jsonl/],
  [['audit', 'list', '--result', 'maybe'], /--result is one of ok, error/],
  [['audit', 'list', '--limit', '0'], /limit/],
  [['users', 'list', '--vault', 'safe'], /--vault must be auto, keychain or file \(got 'safe'\)/],
  [['console-link', '--port', '1'], /Unknown option '--port'/],
];

describe('bad usage', () => {
  it('exits 2 with the problem and a usage line on stderr, nothing on stdout', async () => {
    const results = await mapLimit(BAD, 4, ([args]) => runCliHere([...args, '--data-dir', dataDir]));
    for (const [i, r] of results.entries()) {
      const [args, message] = BAD[i]!;
      const what = `gatehouse ${args.join(' ')}: ${r.stderr}`;
      expect(r.code, what).toBe(2);
      expect(r.stdout, what).toBe('');
      expect(r.stderr, what).toMatch(/^gatehouse: /);
      expect(r.stderr, what).toMatch(message);
      expect(r.stderr, what).toMatch(USAGE_LINE);
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  it('with --json: {ok:false, code, message} on stderr, stdout empty, exit 2', async () => {
    // One of each kind of check: the JSON shape is written in one place.
    const picked = BAD.filter(([args]) =>
      [
        'frobnicate',
        'tokens list --bogus',
        'tokens frob',
        'users add carol',
        'audit export --format xml',
        'users list --vault safe',
      ].includes(args.join(' ')),
    );
    expect(picked).toHaveLength(6);
    const results = await mapLimit(picked, 4, ([args]) => runCli([...args, '--data-dir', dataDir, '--json']));
    for (const [i, r] of results.entries()) {
      const [args, message] = picked[i]!;
      const what = `gatehouse ${args.join(' ')} --json: ${r.stderr}`;
      expect(r.code, what).toBe(2);
      expect(r.stdout, what).toBe('');
      const err = JSON.parse(r.stderr) as Record<string, unknown>;
      expect(Object.keys(err).sort(), what).toEqual(['code', 'message', 'ok']);
      expect(err.ok).toBe(false);
      expect(err.code).toBe('invalid_request');
      expect(err.message, what).toMatch(message);
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  it('no command prints the usage to stderr and exits 2; --help prints it to stdout and exits 0', async () => {
    const [none, help, sub, version] = await Promise.all([
      runCli([]),
      runCli(['--help']),
      runCli(['tokens', '--help']),
      runCli(['--version']),
    ]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^gatehouse \S+ — local MCP gateway\n\nUsage: gatehouse <command> \[options\]/);
    for (const r of [help, sub]) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      for (const cmd of [
        'serve',
        'tokens create',
        'users add',
        'settings set',
        'staged confirm',
        'audit export',
        'console-link',
      ])
        expect(r.stdout).toContain(cmd);
    }
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
  });

  it('values the CLI checks itself exit 1 with a message naming the problem, before the data dir is opened', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['settings', 'set', 'colour', 'blue'], /unknown setting 'colour'; settings are: enabled, rate_limit/],
      [['settings', 'set', 'rate_limit', 'abc'], /rate_limit takes a whole number \(got 'abc'\)/],
      [['settings', 'set', 'enabled', 'maybe'], /enabled takes true or false \(got 'maybe'\)/],
      [
        ['users', 'add', 'carol', '--role', 'overlord'],
        /unknown role 'overlord': a role is one of administrator, editor, author, contributor, subscriber/,
      ],
      [['users', 'set-role', 'admin', 'overlord'], /unknown role 'overlord'/],
    ];
    const results = await mapLimit(cases, 4, ([args]) => runCliHere([...args, '--data-dir', dataDir, '--json']));
    for (const [i, r] of results.entries()) {
      const [args, message] = cases[i]!;
      const what = `gatehouse ${args.join(' ')}: ${r.stderr}`;
      expect(r.code, what).toBe(1);
      expect(r.stdout, what).toBe('');
      expect(JSON.parse(r.stderr), what).toEqual({
        ok: false,
        code: 'invalid_value',
        message: expect.stringMatching(message),
      });
    }
    const human = await runCli(['settings', 'set', 'rate_limit', 'abc', '--data-dir', dataDir]);
    expect(human).toMatchObject({
      code: 1,
      stdout: '',
      stderr: "gatehouse: rate_limit takes a whole number (got 'abc') [invalid_value]\n",
    });
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe('the data dir', () => {
  it('an empty --data-dir (an unset shell variable) is bad usage, never the default profile', async () => {
    const home = await tempDataDir();
    try {
      for (const args of [
        ['tokens', 'list', '--data-dir', ''],
        ['serve', '--port', '0', '--data-dir', ''],
      ]) {
        const r = await runCli(args, { HOME: home, XDG_CONFIG_HOME: join(home, '.config') });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(/--data-dir is empty/);
        expect(existsSync(join(home, '.config', 'Gatehouse'))).toBe(false);
      }
    } finally {
      await removeDir(home);
    }
  });

  it('a data dir that is a file, or under one, is a clear error without a stack trace', async () => {
    const file = join(parent, 'a-file');
    writeFileSync(file, 'not a folder');
    for (const [dir, why] of [
      [file, /is a file, not a folder/],
      [join(file, 'sub'), /is inside a file/],
    ] as const) {
      const r = await runCli(['tokens', 'list', '--data-dir', dir, '--vault', 'file']);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toMatch(/\[invalid_value\]/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
