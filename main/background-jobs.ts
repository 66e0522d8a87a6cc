import type { Logger } from './lib/logger.ts';

export interface BackgroundJob {
  every: number;
  what: string;
  run: () => Promise<unknown>;
}

/**
 * The service's own periodic work (sweeps, flushes). A failed run is logged
 * and tried again at the next tick: one bad run must not stop the job. The
 * timers never keep the process alive on their own.
 */
export function startBackgroundJobs(log: Logger, jobs: readonly BackgroundJob[]): { stop(): void } {
  const timers = jobs.map((job) => {
    const t = setInterval(
      () => void job.run().catch((e) => log.error(`${job.what} failed`, { error: (e as Error).message })),
      job.every,
    );
    t.unref();
    return t;
  });
  return {
    stop: () => {
      for (const t of timers) clearInterval(t);
    },
  };
}
