import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GatehouseError } from '../../main/core/errors.ts';
import { JsonFileStore } from '../../main/store/json-file-store.ts';
import { createLogger } from '../../main/lib/logger.ts';

const Doc = z.object({
  counter: z.number().int().nonnegative(),
  items: z.array(z.string()),
  settings: z
    .object({
      rate_limit: z.number().int().min(0).default(120),
      approval_mode: z.enum(['admin', 'agent']).default('admin'),
    })
    .default({ rate_limit: 120, approval_mode: 'admin' }),
});
type Doc = z.infer<typeof Doc>;
const defaults = (): Doc => ({ counter: 0, items: [], settings: { rate_limit: 120, approval_mode: 'admin' } });

function capture(): { log: ReturnType<typeof createLogger>; lines: () => string[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString('utf8')));
  return { log: createLogger({ stream, json: true, level: 'debug' }), lines: () => text.split('\n').filter(Boolean) };
}

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-store-'));
  file = join(dir, 'data', 'store.json');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('JsonFileStore', () => {
  it('starts a missing file from defaults, writes it 0600 in a 0700 folder, and reloads it', async () => {
    const { log } = capture();
    const store = await JsonFileStore.open({ file, schema: Doc, defaults, log });
    expect(store.read()).toEqual(defaults());
    expect(store.corruptBackup).toBeNull();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(defaults());
    if (process.platform !== 'win32') {
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir, 'data'))).mode & 0o777).toBe(0o700);
    }
    await store.update((d) => {
      d.counter = 7;
    });
    const again = await JsonFileStore.open({ file, schema: Doc, defaults, log });
    expect(again.read().counter).toBe(7);
  });

  it('fills fields missing from an older file with the schema defaults', async () => {
    await writeFile(join(dir, 'old.json'), JSON.stringify({ counter: 3, items: ['a'] }));
    const store = await JsonFileStore.open({ file: join(dir, 'old.json'), schema: Doc, defaults, log: capture().log });
    expect(store.read()).toEqual({ counter: 3, items: ['a'], settings: { rate_limit: 120, approval_mode: 'admin' } });
    expect(store.corruptBackup).toBeNull();
  });

  it('lands all 200 concurrent updates from many writers, in memory and on disk', async () => {
    const store = await JsonFileStore.open({ file, schema: Doc, defaults, log: capture().log });
    const writers = Array.from({ length: 20 }, (_, w) =>
      Promise.all(
        Array.from({ length: 10 }, async (_, k) => {
          // Yield first so the writers interleave instead of queueing in order.
          await new Promise((r) => setTimeout(r, Math.random() * 5));
          return store.update((d) => {
            const before = d.counter;
            d.counter = before + 1;
            d.items.push(`w${w}-${k}`);
            return d.counter;
          });
        }),
      ),
    );
    const results = (await Promise.all(writers)).flat();
    expect(store.read().counter).toBe(200);
    expect(store.read().items).toHaveLength(200);
    expect(new Set(store.read().items).size).toBe(200);
    // Each update saw a distinct counter value: they ran one at a time.
    expect(new Set(results).size).toBe(200);
    const onDisk = Doc.parse(JSON.parse(await readFile(file, 'utf8')));
    expect(onDisk.counter).toBe(200);
    expect([...onDisk.items].sort()).toEqual([...store.read().items].sort());
  });

  it('rejects an invalid mutation with a clear error naming the field, and changes nothing', async () => {
    const store = await JsonFileStore.open({ file, schema: Doc, defaults, log: capture().log });
    await store.update((d) => {
      d.counter = 5;
      d.items.push('keep');
    });
    const diskBefore = await readFile(file, 'utf8');
    const memBefore = structuredClone(store.read());

    const err = await store
      .update((d) => {
        d.counter = 6;
        (d.settings as { rate_limit: unknown }).rate_limit = 'fast';
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatehouseError);
    expect((err as GatehouseError).code).toBe('invalid_value');
    expect((err as GatehouseError).message).toMatch(/settings\.rate_limit/);
    expect((err as GatehouseError).message).not.toContain('fast');

    expect(store.read()).toEqual(memBefore);
    expect(await readFile(file, 'utf8')).toBe(diskBefore);
  });

  it('commits updates queued together, skipping only the one that fails', async () => {
    const store = await JsonFileStore.open({ file, schema: Doc, defaults, log: capture().log });
    const results = await Promise.allSettled([
      store.update((d) => d.items.push('a')),
      store.update((d) => {
        d.items.push('bad');
        d.counter = -1;
      }),
      store.update((d) => d.items.push('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(store.read()).toMatchObject({ counter: 0, items: ['a', 'c'] });
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ counter: 0, items: ['a', 'c'] });
  });

  it('rejects an update whose write fails and keeps the document in memory as it was', async () => {
    const store = await JsonFileStore.open({ file, schema: Doc, defaults, log: capture().log });
    await store.update((d) => (d.counter = 1));
    await rm(join(dir, 'data'), { recursive: true }); // the folder is gone: the temp file cannot be created
    await expect(store.update((d) => (d.counter = 2))).rejects.toMatchObject({
      code: 'internal_error',
      message: expect.stringMatching(/could not save .*ENOENT.*not applied/),
    });
    expect(store.read().counter).toBe(1);
  });

  it('passes an error thrown by the mutation through unchanged and changes nothing', async () => {
    const store = await JsonFileStore.open({ file, schema: Doc, defaults, log: capture().log });
    const diskBefore = await readFile(file, 'utf8');
    const boom = new GatehouseError('conflict', 'already there');
    await expect(
      store.update((d) => {
        d.counter = 99;
        d.items.push('half');
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(store.read()).toEqual(defaults());
    expect(await readFile(file, 'utf8')).toBe(diskBefore);
    // The queue carries on after a failure.
    await expect(store.update((d) => (d.counter = 1))).resolves.toBe(1);
    await store.flush();
    expect(JSON.parse(await readFile(file, 'utf8')).counter).toBe(1);
  });

  it('refuses an update nested inside an update of the same store instead of deadlocking, and the outer one with it', async () => {
    const store = await JsonFileStore.open({ file, schema: Doc, defaults, log: capture().log });
    let inner: Promise<unknown> = Promise.resolve();
    const err = await store
      .update((d) => {
        d.counter = 1;
        inner = store.update((x) => (x.counter = 2));
      })
      .catch((e: unknown) => e);
    expect((err as GatehouseError).code).toBe('internal_error');
    expect((err as GatehouseError).message).toMatch(/from inside an update of the same store/);
    await expect(inner).rejects.toMatchObject({ code: 'internal_error' });
    expect(store.read().counter).toBe(0);
    // Nested and never looked at: the outer update still fails, and nothing is left unhandled.
    await expect(
      store.update(() => {
        void store.update((x) => (x.counter = 9));
      }),
    ).rejects.toMatchObject({ code: 'internal_error' });
    expect(store.read().counter).toBe(0);
    // Updates that merely follow each other (not nested) are fine, also from callbacks scheduled during one.
    let later: Promise<unknown> = Promise.resolve();
    await store.update((d) => {
      d.counter = 3;
      later = new Promise((r) => setTimeout(r, 0)).then(() => store.update((x) => (x.counter += 1)));
    });
    await later;
    expect(store.read().counter).toBe(4);
  });

  it('refuses a mutation that returns a promise, and changes nothing in memory or on disk', async () => {
    const store = await JsonFileStore.open({ file, schema: Doc, defaults, log: capture().log });
    await store.update((d) => (d.counter = 5));
    const diskBefore = await readFile(file, 'utf8');
    const err = await store
      .update((async (d: { counter: number }) => {
        d.counter = 6;
        await new Promise((r) => setImmediate(r));
        d.counter = 7;
      }) as never)
      .catch((e: unknown) => e);
    expect((err as GatehouseError).code).toBe('internal_error');
    expect((err as GatehouseError).message).toMatch(/synchronously/);
    expect(store.read().counter).toBe(5);
    expect(await readFile(file, 'utf8')).toBe(diskBefore);
    // the queue carries on
    await expect(store.update((d) => (d.counter = 8))).resolves.toBe(8);
  });

  it('hands out a frozen snapshot, so the committed document cannot change behind the store', async () => {
    const store = await JsonFileStore.open({ file, schema: Doc, defaults, log: capture().log });
    const snap = store.read();
    expect(() => snap.items.push('sneaky')).toThrow(TypeError);
    expect(store.read().items).toEqual([]);
  });

  for (const [name, content] of [
    ['garbage bytes', Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x22, 0x01, 0x02, 0x7d, 0x0a, 0x9c])],
    ['valid JSON that fails the schema', Buffer.from(JSON.stringify({ counter: 'seven', items: 'nope' }))],
    ['an empty file', Buffer.alloc(0)],
  ] as const) {
    it(`moves a corrupt file (${name}) aside with a timestamped name, keeps it, loads defaults and logs loudly`, async () => {
      await writeFile(join(dir, 'c.json'), content);
      const { log, lines } = capture();
      const store = await JsonFileStore.open({ file: join(dir, 'c.json'), schema: Doc, defaults, log });

      expect(store.read()).toEqual(defaults());
      expect(store.corruptBackup).toMatch(/c\.json\.corrupt-\d{8}T\d{6}Z$/);
      const backup = store.corruptBackup as string;
      expect(await readFile(backup)).toEqual(content);
      // The store file itself now holds valid defaults.
      expect(Doc.parse(JSON.parse(await readFile(join(dir, 'c.json'), 'utf8')))).toEqual(defaults());

      const errors = lines()
        .map((l) => JSON.parse(l) as { level: string; msg: string; backup?: string })
        .filter((r) => r.level === 'error');
      expect(errors).toHaveLength(1);
      expect(errors[0]?.msg).toContain(backup);
      expect(errors[0]?.backup).toBe(backup);
    });
  }

  it('never replaces an earlier backup taken in the same second', async () => {
    const f = join(dir, 'twice.json');
    await writeFile(f, 'first garbage');
    const a = await JsonFileStore.open({ file: f, schema: Doc, defaults, log: capture().log });
    await writeFile(f, 'second garbage');
    const b = await JsonFileStore.open({ file: f, schema: Doc, defaults, log: capture().log });
    expect(a.corruptBackup).not.toBe(b.corruptBackup);
    expect(await readFile(a.corruptBackup as string, 'utf8')).toBe('first garbage');
    expect(await readFile(b.corruptBackup as string, 'utf8')).toBe('second garbage');
  });

  it('moves an unreadable store (a folder where the file should be) aside instead of failing or overwriting', async () => {
    const f = join(dir, 'odd.json');
    await mkdir(f);
    await writeFile(join(f, 'inside.txt'), 'keep me');
    const { log, lines } = capture();
    const store = await JsonFileStore.open({ file: f, schema: Doc, defaults, log });
    expect(store.corruptBackup).toMatch(/odd\.json\.corrupt-\d{8}T\d{6}Z$/);
    expect(await readFile(join(store.corruptBackup as string, 'inside.txt'), 'utf8')).toBe('keep me');
    expect(store.read()).toEqual(defaults());
    expect(lines().some((l) => l.includes('"level":"error"') && l.includes('unreadable'))).toBe(true);
  });

  it('removes temp files left by a writer that died before its rename', async () => {
    await JsonFileStore.open({ file, schema: Doc, defaults, log: capture().log });
    const orphan = join(dir, 'data', '.store.json.tmp-999999999-abcdef');
    await writeFile(orphan, '{"half":');
    await JsonFileStore.open({ file, schema: Doc, defaults, log: capture().log });
    expect(await readdir(join(dir, 'data'))).toEqual(['store.json']);
  });
});
