import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withFileMutex } from '../../main/store/file-mutex.ts';
import { deadPid, exited, spawnFixture, waitForLine } from './fixtures/spawn-fixture.ts';

let dir: string;
const children: Array<ReturnType<typeof spawnFixture>> = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-mutex-'));
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    c.kill('SIGKILL');
    await exited(c);
  }
  await rm(dir, { recursive: true, force: true });
});

/** Every "done" line a racer prints from now on, counted. */
function doneCounter(child: ReturnType<typeof spawnFixture>): () => number {
  let count = 0;
  child.stdout.on(
    'data',
    (chunk: Buffer) =>
      (count += chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l === 'done').length),
  );
  return () => count;
}

describe("file mutex (the vault file's lock)", () => {
  it('lets one process at a time in, also when several find the same stale lock and break it at once', async () => {
    const mutex = join(dir, 'vault.json.lock');
    const counter = join(dir, 'counter');
    await writeFile(counter, '0');
    const racers = [0, 1, 2].map(() => spawnFixture('mutex-racer.ts', [mutex, counter]));
    children.push(...racers);
    await Promise.all(racers.map((c) => waitForLine(c, (l) => l === 'ready')));
    const dones = racers.map(doneCounter);
    const rounds = 8;
    for (let round = 1; round <= rounds; round++) {
      // A lock left by a process that died: every racer finds it stale at the same moment.
      await writeFile(
        mutex,
        JSON.stringify({ pid: await deadPid(), started: '2020-01-01T00:00:00.000Z', nonce: `dead${round}` }),
      );
      for (const c of racers) c.stdin.write('go\n');
      while (dones.some((d) => d() < round)) await new Promise((r) => setTimeout(r, 10));
    }
    expect(Number(await readFile(counter, 'utf8'))).toBe(racers.length * rounds);
    for (const c of racers) c.stdin.end();
    await Promise.all(racers.map((c) => exited(c)));
    children.splice(0);
    expect((await readdir(dir)).sort()).toEqual(['counter']);
  }, 120_000);

  it('waits for a live holder, and gives up after the timeout naming it', async () => {
    const mutex = join(dir, 'm.lock');
    let inner: Promise<unknown> | null = null;
    await withFileMutex(mutex, async () => {
      inner = withFileMutex(mutex, async () => 'never', { timeoutMs: 150 }).catch((e: Error) => e.message);
      // held until the waiter has given up
      await inner;
    });
    expect(await inner).toMatch(new RegExp(`stayed locked for 150 ms \\(by pid ${process.pid}\\)`));
    expect(await withFileMutex(mutex, async () => 'after')).toBe('after');
  });
});
