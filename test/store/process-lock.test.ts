import { access, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatehouseError } from '../../main/core/errors.ts';
import { LOCK_FILE, acquireLock, readLockOwner } from '../../main/store/process-lock.ts';
import { deadPid, exited, spawnFixture, waitForLine } from './fixtures/spawn-fixture.ts';

let dir: string;
const children: Array<ReturnType<typeof spawnFixture>> = [];
const releases: Array<() => Promise<void>> = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-lock-'));
});
afterEach(async () => {
  for (const r of releases.splice(0)) await r();
  for (const c of children.splice(0)) {
    c.kill('SIGKILL');
    await exited(c);
  }
  await rm(dir, { recursive: true, force: true });
});

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

describe('process lock', () => {
  it('writes {pid, owner, started} and removes the file on release', async () => {
    const lock = await acquireLock(dir, 'service');
    releases.push(() => lock.release());
    expect(lock.pid).toBe(process.pid);
    const record = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8'));
    expect(record).toMatchObject({ pid: process.pid, owner: 'service' });
    expect(Number.isNaN(Date.parse(record.started))).toBe(false);
    expect(await readLockOwner(dir)).toMatchObject({ pid: process.pid, owner: 'service', alive: true });

    await lock.release();
    expect(await exists(join(dir, LOCK_FILE))).toBe(false);
    expect(await readLockOwner(dir)).toBeNull();
    await lock.release(); // twice is harmless
  });

  it('refuses a second acquirer with store_locked naming the holder', async () => {
    const lock = await acquireLock(dir, 'service');
    releases.push(() => lock.release());
    const err = await acquireLock(dir, 'cli').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatehouseError);
    expect((err as GatehouseError).code).toBe('store_locked');
    expect((err as GatehouseError).message).toContain(`pid ${process.pid}, service`);
    expect((err as GatehouseError).message).toContain(dir);
    // The holder's lock is untouched.
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')).owner).toBe('service');
  });

  it('takes over a stale lock whose pid is gone', async () => {
    const pid = await deadPid();
    await writeFile(
      join(dir, LOCK_FILE),
      JSON.stringify({ pid, owner: 'service', started: '2020-01-01T00:00:00.000Z' }),
    );
    expect(await readLockOwner(dir)).toMatchObject({ pid, alive: false });
    const lock = await acquireLock(dir, 'cli');
    releases.push(() => lock.release());
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid, owner: 'cli' });
  });

  it('lets exactly one of many interleaved acquirers take over a stale lock', async () => {
    // In one process the acquirers interleave at every await: the finest-grained race we can stage.
    for (let round = 0; round < 5; round++) {
      await writeFile(
        join(dir, LOCK_FILE),
        JSON.stringify({ pid: await deadPid(), owner: 'service', started: '2020-01-01T00:00:00.000Z' }),
      );
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => acquireLock(dir, 'cli')));
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const r of results)
        if (r.status === 'rejected') expect((r.reason as GatehouseError).code).toBe('store_locked');
      await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof acquireLock>>>).value.release();
      expect(await readdir(dir)).toEqual([]);
    }
  });

  it('treats a lock file it cannot read as held while fresh and as stale once old', async () => {
    const lockFile = join(dir, LOCK_FILE);
    await writeFile(lockFile, 'not json');
    await expect(acquireLock(dir, 'cli')).rejects.toMatchObject({
      code: 'store_locked',
      message: expect.stringContaining('not a lock file'),
    });
    expect(await readFile(lockFile, 'utf8')).toBe('not json');
    const old = new Date(Date.now() - 60_000);
    await utimes(lockFile, old, old);
    const lock = await acquireLock(dir, 'cli');
    releases.push(() => lock.release());
    expect(await readLockOwner(dir)).toMatchObject({ pid: process.pid, alive: true });
  });

  it('release leaves a lock alone that is no longer ours', async () => {
    const lock = await acquireLock(dir, 'cli');
    const someoneElse = JSON.stringify({
      pid: process.pid,
      owner: 'service',
      started: new Date().toISOString(),
      nonce: 'other',
    });
    await writeFile(join(dir, LOCK_FILE), someoneElse);
    await lock.release();
    expect(await readFile(join(dir, LOCK_FILE), 'utf8')).toBe(someoneElse);
  });

  for (const stale of [false, true]) {
    it(`lets exactly one of two racing processes win${stale ? ' when both find a stale lock' : ''}`, async () => {
      for (let round = 0; round < 3; round++) {
        if (stale)
          await writeFile(
            join(dir, LOCK_FILE),
            JSON.stringify({ pid: await deadPid(), owner: 'service', started: '2020-01-01T00:00:00.000Z' }),
          );
        const racers = [spawnFixture('lock-racer.ts', [dir]), spawnFixture('lock-racer.ts', [dir])];
        children.push(...racers);
        await Promise.all(racers.map((c) => waitForLine(c, (l) => l === 'ready')));
        const outcomes = racers.map((c) => waitForLine(c, (l) => l.startsWith('{')));
        for (const c of racers) c.stdin.write('go\n');
        const results = (await Promise.all(outcomes)).map(
          (l) => JSON.parse(l) as { won: boolean; code?: string; pid?: number },
        );

        expect(results.filter((r) => r.won)).toHaveLength(1);
        expect(results.find((r) => !r.won)?.code).toBe('store_locked');
        const winner = results.find((r) => r.won);
        expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')).pid).toBe(winner?.pid);

        // The winner releases when its stdin closes; the lock file goes with it.
        for (const c of racers) c.stdin.end();
        await Promise.all(racers.map((c) => exited(c)));
        children.splice(0);
        expect(await exists(join(dir, LOCK_FILE))).toBe(false);
        expect((await readdir(dir)).filter((n) => n.startsWith('gatehouse.lock'))).toEqual([]);
      }
    }, 120_000); // ceiling for six Node start-ups on a busy machine
  }

  it('a killed holder leaves a stale lock that the next process takes over', async () => {
    const holder = spawnFixture('lock-racer.ts', [dir, 'service']);
    children.push(holder);
    await waitForLine(holder, (l) => l === 'ready');
    const won = waitForLine(holder, (l) => l.startsWith('{'));
    holder.stdin.write('go\n');
    expect(JSON.parse(await won).won).toBe(true);
    await expect(acquireLock(dir, 'cli')).rejects.toMatchObject({ code: 'store_locked' });

    holder.kill('SIGKILL');
    await exited(holder);
    expect(await readLockOwner(dir)).toMatchObject({ owner: 'service', alive: false });
    const lock = await acquireLock(dir, 'cli');
    releases.push(() => lock.release());
    expect(await readLockOwner(dir)).toMatchObject({ pid: process.pid, owner: 'cli', alive: true });
  });
});
