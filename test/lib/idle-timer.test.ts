import { afterEach, describe, expect, it, vi } from 'vitest';
import { IdleTimer } from '../../main/lib/idle-timer.ts';

afterEach(() => vi.useRealTimers());

describe('IdleTimer', () => {
  it('fires after a silence; a touch starts the wait again; overlapping pauses stop it until the last resume', () => {
    vi.useFakeTimers();
    const fired: number[] = [];
    const t = new IdleTimer(100, () => fired.push(Date.now()));
    vi.advanceTimersByTime(90);
    t.touch();
    vi.advanceTimersByTime(90);
    expect(fired).toEqual([]);
    const a = t.pause();
    const b = t.pause();
    vi.advanceTimersByTime(1000);
    t.touch();
    vi.advanceTimersByTime(1000);
    a();
    a();
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual([]);
    b();
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toHaveLength(1);
    t.touch();
    vi.advanceTimersByTime(1000);
    expect(fired).toHaveLength(1);
  });

  it('never fires once stopped, even when resumed after', () => {
    vi.useFakeTimers();
    let fired = false;
    const t = new IdleTimer(10, () => (fired = true));
    const resume = t.pause();
    t.stop();
    resume();
    vi.advanceTimersByTime(100);
    expect(fired).toBe(false);
  });
});
