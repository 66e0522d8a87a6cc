import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { JsonFileStore } from '../../main/store/json-file-store.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { digestFileOf } from '../../main/store/trusted-digest.ts';

// main/store/trusted-digest.ts: a store that trusts its own writes takes back the text it wrote without validating
// it again, and validates everything else in full, as before.
const Doc = z.object({
  counter: z.number().int().nonnegative(),
  items: z.array(z.string()),
  mode: z.enum(['a', 'b']).default('a'),
});
type Doc = z.infer<typeof Doc>;
const defaults = (): Doc => ({ counter: 0, items: [], mode: 'a' });

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-digest-'));
  file = join(dir, 'store.json');
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

const open = (schema: z.ZodType<Doc> = Doc) =>
  JsonFileStore.open({ file, schema, defaults, log: silentLogger, trustOwnWrites: true });

/** Opens the store and says whether the document was validated on the way. */
async function openCounting(schema: z.ZodType<Doc> = Doc): Promise<{ store: JsonFileStore<Doc>; validated: boolean }> {
  const spy = vi.spyOn(schema, 'safeParse');
  const store = await open(schema);
  const validated = spy.mock.calls.length > 0;
  spy.mockRestore();
  return { store, validated };
}

describe('a store that trusts its own writes', () => {
  it('takes back what it wrote without validating it, with the same content', async () => {
    const first = await open();
    await first.update((d) => {
      d.counter = 5;
      d.items.push('x');
    });
    expect((await stat(digestFileOf(file))).mode & 0o777).toBe(0o600);
    const { store, validated } = await openCounting();
    expect(validated).toBe(false);
    expect(store.read()).toEqual({ counter: 5, items: ['x'], mode: 'a' });
    expect(Object.isFrozen(store.read().items)).toBe(true);
  });

  it('validates a file changed by someone else, and refuses what is invalid as before', async () => {
    const first = await open();
    await first.update((d) => {
      d.counter = 5;
    });
    // still JSON, no longer valid: the digest no longer matches, so the schema judges it
    await writeFile(file, JSON.stringify({ counter: -1, items: [] }));
    const { store, validated } = await openCounting();
    expect(validated).toBe(true);
    expect(store.corruptBackup).not.toBeNull();
    expect(store.read()).toEqual(defaults());
  });

  it('validates when the digest is older than the file (a kill between the two writes)', async () => {
    const first = await open();
    await first.update((d) => {
      d.counter = 1;
    });
    const oldDigest = await readFile(digestFileOf(file), 'utf8');
    await first.update((d) => {
      d.counter = 2;
    });
    await writeFile(digestFileOf(file), oldDigest);
    const { store, validated } = await openCounting();
    expect(validated).toBe(true);
    expect(store.read().counter).toBe(2);
  });

  it('validates under a schema that changed since the write, and fills its new defaults', async () => {
    const first = await open();
    await first.update((d) => {
      d.counter = 3;
    });
    const Grown = Doc.extend({ extra: z.boolean().default(true) }) as unknown as z.ZodType<Doc>;
    const { store, validated } = await openCounting(Grown);
    expect(validated).toBe(true);
    expect(store.read()).toEqual({ counter: 3, items: [], mode: 'a', extra: true });
  });

  it('rewrites a valid file of an older form once in the current one, then trusts it', async () => {
    // An older version's file, without the default the schema fills: valid, but not what we would write now.
    await writeFile(file, `${JSON.stringify({ counter: 4, items: [] }, null, 2)}\n`);
    const first = await openCounting();
    expect(first.validated).toBe(true);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ counter: 4, items: [], mode: 'a' });
    const second = await openCounting();
    expect(second.validated).toBe(false);
    expect(second.store.read()).toEqual({ counter: 4, items: [], mode: 'a' });
  });

  it('trusts a valid file written exactly as it would write it, without rewriting it', async () => {
    const text = `${JSON.stringify({ counter: 4, items: [], mode: 'b' }, null, 2)}\n`;
    await writeFile(file, text);
    expect((await openCounting()).validated).toBe(true);
    const before = (await stat(file)).mtimeMs;
    const again = await openCounting();
    expect(again.validated).toBe(false);
    expect(again.store.read()).toEqual({ counter: 4, items: [], mode: 'b' });
    expect((await stat(file)).mtimeMs).toBe(before);
    expect(await readFile(file, 'utf8')).toBe(text);
  });

  it('is not used by a store that did not ask for it', async () => {
    const plain = await JsonFileStore.open({ file, schema: Doc, defaults, log: silentLogger });
    await plain.update((d) => {
      d.counter = 9;
    });
    await expect(stat(digestFileOf(file))).rejects.toThrow(/ENOENT/);
  });
});
