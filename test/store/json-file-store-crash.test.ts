import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { JsonFileStore } from '../../main/store/json-file-store.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { BigDoc, checksumOf } from './fixtures/big-doc-schema.ts';
import { exited, spawnFixture, waitForLine } from './fixtures/spawn-fixture.ts';

// A writer process rewriting a ~8 MB document (mostly long strings, so most of each loop is the write itself) in a tight loop is killed with
// SIGKILL at random moments. Whatever moment the kill lands on, the file must
// parse and validate, and the count it holds never goes backwards.
const KILLS = 24;

let dir: string;
const children: Array<ReturnType<typeof spawnFixture>> = [];

afterEach(async () => {
  for (const c of children.splice(0)) {
    c.kill('SIGKILL');
    await exited(c);
  }
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('JsonFileStore under SIGKILL', () => {
  it(`leaves a whole, valid file after ${KILLS} kills mid-write`, async () => {
    dir = await mkdtemp(join(tmpdir(), 'gh-crash-'));
    const file = join(dir, 'big.json');
    let lastN = -1;
    let killedMidWrite = 0;

    for (let round = 0; round < KILLS; round++) {
      const child = spawnFixture('crash-writer.ts', [file]);
      children.push(child);
      const ready = waitForLine(child, (l) => l.startsWith('ready '));
      const firstWrite = waitForLine(child, (l) => l.startsWith('wrote '));
      const startN = Number((await ready).split(' ')[1]);
      // The child must have loaded what the last one left, not a backup or defaults.
      if (round > 0) expect(startN).toBe(lastN);

      // Once the loop runs, kill it at a random moment (one write of this size takes tens of ms).
      await firstWrite;
      await new Promise((r) => setTimeout(r, Math.random() * 80));
      child.kill('SIGKILL');
      await exited(child);
      children.splice(children.indexOf(child), 1);

      // A temp file left behind means this kill landed between the temp's creation and its rename.
      if ((await readdir(dir)).some((n) => n.startsWith('.big.json.tmp-'))) killedMidWrite++;

      const raw = await readFile(file, 'utf8');
      const doc = BigDoc.parse(JSON.parse(raw));
      expect(doc.checksum).toBe(checksumOf(doc.n, doc.rows.length));
      expect(doc.n).toBeGreaterThan(startN);
      lastN = doc.n;
    }

    console.log(`crash test: ${KILLS} kills, ${killedMidWrite} of them between a temp file's creation and its rename`);

    // Opening afterwards finds no corrupt file, and sweeps the temp files the killed writers left.
    const store = await JsonFileStore.open({
      file,
      schema: BigDoc,
      defaults: () => ({ n: 0, rows: [], checksum: checksumOf(0, 0) }),
      log: silentLogger,
    });
    expect(store.corruptBackup).toBeNull();
    expect(store.read().n).toBe(lastN);
    expect((await readdir(dir)).filter((n) => n !== 'big.json')).toEqual([]);
  }, 240_000); // a ceiling, not a speed target: each round starts a Node process on a shared machine
});
