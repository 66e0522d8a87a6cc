import type { AuditResult, Stats } from '../contract/audit.ts';
import type { DocumentStore, Clock } from './ports.ts';
import type { OptionsData } from './options-data.ts';

const HOURLY_KEEP_MS = 30 * 24 * 3600 * 1000;

/**
 * Counters per tool and result, kept beside the settings. Counted in memory
 * on the hot path and folded into the options file every few seconds, so a
 * tool call never waits for a file write.
 */
export class StatsRecorder {
  private pending: Array<{ tool: string; result: AuditResult; at: number }> = [];

  constructor(private readonly store: DocumentStore<OptionsData>, private readonly clock: Clock) {}

  count(tool: string, result: AuditResult): void {
    this.pending.push({ tool, result, at: this.clock.now() });
  }

  /** Persisted stats plus what is still in memory. */
  snapshot(): Stats {
    const s = structuredClone(this.store.read().stats);
    fold(s, this.pending);
    return s;
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const now = this.clock.now();
    try {
      await this.store.update((d) => {
        fold(d.stats, batch);
        d.stats.since ??= new Date(now).toISOString();
        const cutoff = new Date(now - HOURLY_KEEP_MS).toISOString().slice(0, 13);
        for (const hour of Object.keys(d.stats.hourly)) if (hour < cutoff) delete d.stats.hourly[hour];
      });
    } catch (e) {
      this.pending = batch.concat(this.pending);
      throw e;
    }
  }
}

function fold(s: Stats, batch: ReadonlyArray<{ tool: string; result: AuditResult; at: number }>): void {
  for (const { tool, result, at } of batch) {
    const t = (s.tools[tool] ??= {});
    t[result] = (t[result] ?? 0) + 1;
    const hour = new Date(at).toISOString().slice(0, 13);
    const h = (s.hourly[hour] ??= {});
    h[result] = (h[result] ?? 0) + 1;
  }
}
