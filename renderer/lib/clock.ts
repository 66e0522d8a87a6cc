import { useSyncExternalStore } from 'react';

/**
 * One shared one-second tick for every countdown on the page: 500 pending
 * approvals mean 500 small re-renders per second, not 500 timers.
 */
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;
let now = Date.now();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!timer) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const l of listeners) l();
    }, 1000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

const snapshot = () => now;

export function useNow(): number {
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}

/** How many timers the clock runs (0 or 1); for tests. */
export const clockTimers = (): number => (timer ? 1 : 0);
