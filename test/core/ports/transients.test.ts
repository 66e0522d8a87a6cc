import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonFileStore } from '../../../main/store/json-file-store.ts';
import { OptionsData, emptyOptions } from '../../../main/core/ports/options-data.ts';
import { Transients } from '../../../main/core/ports/transients.ts';
import { silentLogger } from '../../../main/lib/logger.ts';

let dir: string;
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('transients (injected clock)', () => {
  it('are ignored once expired and swept from the file', async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-transients-'));
    const file = join(dir, 'options.json');
    const store = await JsonFileStore.open({ file, schema: OptionsData, defaults: emptyOptions, log: silentLogger });
    let now = 1_000_000;
    const t = new Transients(store, { now: () => now });
    await t.set('a', { n: 1 }, 60_000);
    await t.set('b', { n: 2 }, 120_000);
    expect(t.get('a')).toEqual({ n: 1 });
    now += 60_000;
    expect(t.get('a')).toBeUndefined();
    expect(t.get('b')).toEqual({ n: 2 });
    expect(t.list('').map((x) => x.key)).toEqual(['b']);
    const seen: string[] = [];
    expect(await t.sweep((key) => seen.push(key))).toBe(1);
    expect(seen).toEqual(['a']);
    const onDisk = JSON.parse(await readFile(file, 'utf8')) as OptionsData;
    expect(Object.keys(onDisk.transients)).toEqual(['b']);
    now += 60_000;
    expect(await t.sweep()).toBe(1);
    expect(await t.sweep()).toBe(0);
  });
});
