import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Settings } from '../../main/contract/settings.ts';
import type { TokenView } from '../../main/contract/tokens.ts';
import type { User } from '../../main/contract/users.ts';
import { acquireLock, type LockHandle } from '../../main/store/process-lock.ts';
import {
  cliJson,
  cliJsonError,
  collect,
  dirArgs,
  removeDir,
  runCli,
  spawnCli,
  startServe,
  tempDataDir,
  type CliResult,
  type Served,
} from './cli-harness.ts';

// Every step here is a child process loading the CLI through tsx: seconds each on a busy two-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

// No lost update: many CLI processes at once, against a running service,
// against the bare files (they queue on the data dir lock), and across a
// service starting in the middle of them.

const dirs: string[] = [];
const running: Served[] = [];
const locks: LockHandle[] = [];
afterEach(async () => {
  for (const l of locks.splice(0)) await l.release();
  for (const s of running.splice(0)) await s.stop('SIGKILL');
  for (const d of dirs.splice(0)) await removeDir(d);
});

async function newDir(): Promise<string> {
  const d = await tempDataDir();
  dirs.push(d);
  return d;
}

/** Ten different updates, each from its own process: users, tokens and three different settings. */
function tenWriters(tag: string): string[][] {
  return [
    ...[0, 1, 2, 3].map((i) => ['users', 'add', `${tag}-u${i}`, '--role', 'subscriber']),
    ...[0, 1, 2].map((i) => ['tokens', 'create', '--label', `${tag}-t${i}`]),
    ['settings', 'set', 'rate_limit', '61'],
    ['settings', 'set', 'audit_retention_days', '33'],
    ['settings', 'set', 'cors', 'https://app.example'],
  ];
}

function runAll(dir: string, commands: string[][]): Promise<CliResult[]> {
  return Promise.all(commands.map((c) => runCli([...c, ...dirArgs(dir), '--json'])));
}

function expectAllSucceeded(results: CliResult[], commands: string[][]): void {
  results.forEach((r, i) => expect(r.code, `${commands[i]!.join(' ')}: ${r.stderr}`).toBe(0));
}

/** Every one of the ten updates is there, read back through the CLI and from the file itself. */
async function expectAllLanded(dir: string, tag: string, readFileToo: boolean): Promise<void> {
  const [users, tokens, settings] = await Promise.all([
    cliJson<User[]>(dir, ['users', 'list']),
    cliJson<TokenView[]>(dir, ['tokens', 'list']),
    cliJson<Settings>(dir, ['settings', 'get']),
  ]);
  expect(users.map((u) => u.login)).toEqual(expect.arrayContaining([0, 1, 2, 3].map((i) => `${tag}-u${i}`)));
  expect(tokens.map((t) => t.label)).toEqual(expect.arrayContaining([0, 1, 2].map((i) => `${tag}-t${i}`)));
  expect(settings).toMatchObject({ rate_limit: 61, audit_retention_days: 33, cors: ['https://app.example'] });
  if (readFileToo) {
    const onDisk = JSON.parse(await readFile(join(dir, 'options.json'), 'utf8')) as {
      users: User[];
      tokens: TokenView[];
      settings: Settings;
    };
    expect(onDisk.users.filter((u) => u.login.startsWith(`${tag}-`))).toHaveLength(4);
    expect(onDisk.tokens.filter((t) => t.label.startsWith(`${tag}-`))).toHaveLength(3);
    expect(onDisk.settings).toMatchObject({ rate_limit: 61, audit_retention_days: 33, cors: ['https://app.example'] });
  }
}

/** Resolves when a process with this pid tries to create `gatehouse.lock` in `dir` (its temp file appears). */
function lockAttemptBy(dir: string, pid: number): Promise<void> {
  return new Promise((resolve) => {
    const w = watch(dir, (_event, name) => {
      if (name?.startsWith(`gatehouse.lock.${pid}-`)) {
        w.close();
        resolve();
      }
    });
  });
}

describe('concurrent CLI processes', () => {
  it('ten writers at once against a running service: every update lands', async () => {
    const dir = await newDir();
    const svc = await startServe(dir);
    running.push(svc);
    const commands = tenWriters('svc');
    expectAllSucceeded(await runAll(dir, commands), commands);
    await expectAllLanded(dir, 'svc', false);
    expect((await cliJson<Settings>(dir, ['settings', 'get'])).enabled).toBe(true);
    expect(await svc.stop('SIGTERM')).toMatchObject({ code: 0 });
    await expectAllLanded(dir, 'svc', true);
  });

  it('ten writers at once without a service: they queue on the lock and every update lands', async () => {
    const dir = await newDir();
    const commands = tenWriters('direct');
    expectAllSucceeded(await runAll(dir, commands), commands);
    await expectAllLanded(dir, 'direct', true);
  });

  it('ten writers racing a service that starts among them: every update lands, and the service has them all', async () => {
    const dir = await newDir();
    const commands = tenWriters('mixed');
    const first = runAll(dir, commands.slice(0, 5));
    // Whether it meets a CLI holding the lock (it waits) or not, serve comes up; later writers go through it.
    const svc = await startServe(dir);
    running.push(svc);
    const second = runAll(dir, commands.slice(5));
    const results = [...(await first), ...(await second)];
    expectAllSucceeded(results, commands);
    await expectAllLanded(dir, 'mixed', false);
    expect(await svc.stop('SIGTERM')).toMatchObject({ code: 0 });
    await expectAllLanded(dir, 'mixed', true);
  });

  it('a CLI command waits for a lock another process holds, and goes on once it is released', async () => {
    const dir = await newDir();
    const lock = await acquireLock(dir, 'cli');
    locks.push(lock);
    const child = spawnCli(['users', 'add', 'patient', '--role', 'editor', ...dirArgs(dir), '--json']);
    child.stdin.end();
    const done = collect(child);
    await lockAttemptBy(dir, child.pid!);
    // It found the lock taken and is waiting: nothing has happened yet.
    expect(child.exitCode).toBeNull();
    await lock.release();
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as User).login).toBe('patient');
  });

  it('a lock that is never released: the CLI gives up after its bounded wait with store_locked naming the holder', async () => {
    const dir = await newDir();
    locks.push(await acquireLock(dir, 'cli'));
    const err = await cliJsonError(dir, ['settings', 'set', 'rate_limit', '5'], { GATEHOUSE_LOCK_WAIT_MS: '800' });
    expect(err).toMatchObject({ exit: 1, code: 'store_locked' });
    expect(err.message).toContain(`pid ${process.pid}, cli`);
    expect(err.message).toMatch(/waited \d+\.\d s/);
    const human = await runCli(['users', 'list', ...dirArgs(dir)], { GATEHOUSE_LOCK_WAIT_MS: '0' });
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/another Gatehouse process \(pid \d+, cli\) holds .*\[store_locked\]/);
    const bad = await cliJsonError(dir, ['users', 'list'], { GATEHOUSE_LOCK_WAIT_MS: 'soon' });
    expect(bad).toMatchObject({ exit: 1, code: 'invalid_value' });
    expect(bad.message).toContain('GATEHOUSE_LOCK_WAIT_MS');
  });

  it('serve waits for a CLI command that holds the lock, then starts', async () => {
    const dir = await newDir();
    const lock = await acquireLock(dir, 'cli');
    locks.push(lock);
    const attempted = new Promise<void>((resolve) => {
      // serve's pid is known only once spawned; watch for any attempt that is not ours.
      const w = watch(dir, (_e, name) => {
        if (
          name?.startsWith('gatehouse.lock.') &&
          name.endsWith('.tmp') &&
          !name.startsWith(`gatehouse.lock.${process.pid}-`)
        ) {
          w.close();
          resolve();
        }
      });
    });
    const starting = startServe(dir);
    await attempted;
    await lock.release();
    const svc = await starting;
    running.push(svc);
    const held = JSON.parse(await readFile(join(dir, 'gatehouse.lock'), 'utf8')) as { pid: number; owner: string };
    expect(held).toMatchObject({ pid: svc.child.pid, owner: 'service' });
    expect((await fetch(`${svc.info.base_url}/`)).status).toBe(200);
  });
});
