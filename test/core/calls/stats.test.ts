import { describe, expect, it } from 'vitest';
import { StatsRecorder } from '../../../main/core/calls/stats.ts';
import type { DocumentStore } from '../../../main/core/ports/ports.ts';
import type { OptionsData } from '../../../main/core/ports/options-data.ts';

/** A store whose writes wait for the test to let them through; swaps in a new document on commit, as the file store does. */
class GatedStore implements DocumentStore<OptionsData> {
  private doc = { stats: { since: null, tools: {}, hourly: {}, usage: {} } } as unknown as OptionsData;
  private open: () => void = () => undefined;
  fail = false;
  read(): OptionsData {
    return this.doc;
  }
  async update<R>(mutate: (draft: OptionsData) => R): Promise<R> {
    const draft = structuredClone(this.doc);
    const result = mutate(draft);
    await new Promise<void>((resolve) => (this.open = resolve));
    if (this.fail) throw new Error('disk full');
    this.doc = draft;
    return result;
  }
  release(): void {
    this.open();
  }
}

const clock = { now: () => Date.parse('2026-11-23T10:00:00Z') };
const calls = (s: StatsRecorder) => s.snapshot().tools.pages_get?.ok ?? 0;

describe('StatsRecorder.snapshot', () => {
  it('counts a batch while its flush is being written, once before and once after the commit', async () => {
    const store = new GatedStore();
    const stats = new StatsRecorder(store, clock);
    for (let i = 0; i < 3; i++) stats.count('pages_get', 'ok');
    const flushed = stats.flush();
    await Promise.resolve();
    await Promise.resolve();
    stats.count('pages_get', 'ok');
    expect(calls(stats)).toBe(4); // the 3 being written + 1 new (the old code said 1)
    store.release();
    await flushed;
    expect(calls(stats)).toBe(4);
    expect(store.read().stats.tools.pages_get?.ok).toBe(3);
  });

  it('keeps counting a batch whose write failed, without counting it twice', async () => {
    const store = new GatedStore();
    store.fail = true;
    const stats = new StatsRecorder(store, clock);
    stats.count('pages_get', 'ok');
    stats.count('pages_get', 'ok');
    const flushed = stats.flush();
    await Promise.resolve();
    expect(calls(stats)).toBe(2);
    store.release();
    await expect(flushed).rejects.toThrow('disk full');
    expect(calls(stats)).toBe(2);
  });
});
