/** Time, injected so tests can move it. Milliseconds since the epoch. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/** A pending timer: what `Timers.set` answers and `Timers.clear` takes. */
export interface TimerHandle {
  /** lets the process exit while it waits (real timers) */
  unref?(): unknown;
}

/** Timers, injected so tests can fire what is due instead of waiting for it. */
export interface Timers {
  set(fn: () => void, ms: number): TimerHandle;
  clear(timer: TimerHandle | undefined): void;
}
export const systemTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout> | undefined),
};
