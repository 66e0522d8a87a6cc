import { describe, expect, it } from 'vitest';
import { OneQueued } from '../../main/lib/one-queued.ts';

describe('OneQueued', () => {
  it('a burst while one run is in flight costs one more run, never one each', async () => {
    let runs = 0;
    let inFlight = 0;
    let most = 0;
    const release: Array<() => void> = [];
    const q = new OneQueued(async () => {
      runs++;
      most = Math.max(most, ++inFlight);
      await new Promise<void>((r) => release.push(r));
      inFlight--;
    });
    const first = q.kick();
    const burst = Array.from({ length: 1000 }, () => q.kick());
    expect(runs).toBe(1);
    release.shift()!();
    await first;
    await Promise.resolve();
    expect(runs).toBe(2);
    release.shift()!();
    await Promise.all(burst);
    await q.settled();
    expect([runs, most]).toEqual([2, 1]);
  });

  it('a kick after a run ended starts a fresh one; a failing run does not stop the next', async () => {
    let runs = 0;
    const q = new OneQueued(async () => {
      runs++;
      if (runs === 1) throw new Error('first fails');
    });
    await q.kick();
    await q.kick();
    await q.settled();
    expect(runs).toBe(2);
  });
});
