import { describe, expect, it } from 'vitest';
import { BreakerBoard } from '../../../cloud/ai/routing/breaker.ts';

// The circuit breaker with an injected clock: cooldown after N consecutive
// failures, one half-open probe, growing cooldown after a failed probe.

function board(cfg = {}) {
  let now = 1_000_000;
  const b = new BreakerBoard(() => now, {
    threshold: 3,
    cooldownMs: 10_000,
    maxCooldownMs: 35_000,
    probeLeaseMs: 5_000,
    ...cfg,
  });
  return { b, advance: (ms: number) => void (now += ms), now: () => now };
}

describe('BreakerBoard', () => {
  it('stays closed below the threshold, and a success resets the count', () => {
    const { b } = board();
    b.failure('p');
    b.failure('p');
    expect(b.view('p')).toEqual({ phase: 'closed', failures: 2, retry_at: null });
    b.success('p');
    b.failure('p');
    b.failure('p');
    expect(b.view('p').phase).toBe('closed');
    expect(b.tryAcquire('p')).toBe(true);
  });

  it('opens after N consecutive failures and refuses calls until the cooldown ends', () => {
    const { b, advance, now } = board();
    for (let i = 0; i < 3; i++) b.failure('p');
    expect(b.view('p')).toEqual({ phase: 'open', failures: 3, retry_at: now() + 10_000 });
    expect(b.tryAcquire('p')).toBe(false);
    advance(9_999);
    expect(b.tryAcquire('p')).toBe(false);
    // Other providers are not affected.
    expect(b.tryAcquire('q')).toBe(true);
  });

  it('trip opens the circuit at once (a provider that broke its bound), and a second trip while open doubles the cooldown', () => {
    const { b, advance, now } = board();
    b.success('p');
    b.trip('p');
    expect(b.view('p')).toEqual({ phase: 'open', failures: 3, retry_at: now() + 10_000 });
    expect(b.tryAcquire('p')).toBe(false);
    advance(1_000);
    b.trip('p');
    expect(b.view('p').retry_at).toBe(now() + 20_000);
  });

  it('lets exactly one probe through when the cooldown is over; its success closes the circuit', () => {
    const { b, advance } = board();
    for (let i = 0; i < 3; i++) b.failure('p');
    advance(10_000);
    expect(b.view('p').phase).toBe('half_open');
    expect(b.tryAcquire('p')).toBe(true);
    expect(b.tryAcquire('p')).toBe(false);
    expect(b.view('p').phase).toBe('open');
    b.success('p');
    expect(b.view('p')).toEqual({ phase: 'closed', failures: 0, retry_at: null });
    expect(b.tryAcquire('p')).toBe(true);
  });

  it('reopens with a doubled cooldown after a failed probe, up to the maximum', () => {
    const { b, advance, now } = board();
    for (let i = 0; i < 3; i++) b.failure('p');
    const cooldowns: number[] = [];
    for (let round = 0; round < 4; round++) {
      advance(b.view('p').retry_at! - now());
      expect(b.tryAcquire('p')).toBe(true);
      b.failure('p');
      cooldowns.push(b.view('p').retry_at! - now());
    }
    expect(cooldowns).toEqual([20_000, 35_000, 35_000, 35_000]);
  });

  it('frees the probe slot when the probe never reports back', () => {
    const { b, advance } = board();
    for (let i = 0; i < 3; i++) b.failure('p');
    advance(10_000);
    expect(b.tryAcquire('p')).toBe(true);
    advance(4_999);
    expect(b.tryAcquire('p')).toBe(false);
    advance(1);
    expect(b.tryAcquire('p')).toBe(true);
  });

  it('gives the probe slot back when the call was not made after all', () => {
    const { b, advance } = board();
    for (let i = 0; i < 3; i++) b.failure('p');
    advance(10_000);
    expect(b.tryAcquire('p')).toBe(true);
    b.release('p');
    expect(b.tryAcquire('p')).toBe(true);
  });

  it('forgets providers that left the registry', () => {
    const { b } = board();
    for (let i = 0; i < 3; i++) b.failure('gone');
    b.retain(['other']);
    expect(b.view('gone').phase).toBe('closed');
  });
});
