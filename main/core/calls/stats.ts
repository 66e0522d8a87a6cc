import { UNKNOWN_TOOL, type AuditResult, type Stats, type UsageTotals } from '../../contract/audit.ts';
import type { DocumentStore, RecordedUsage, UsageSink } from '../ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { OptionsData } from '../ports/options-data.ts';
import { ownEntry } from '../safe-record.ts';

const HOUR_MS = 3600 * 1000;
const HOURLY_KEEP_MS = 30 * 24 * HOUR_MS;
/** Hour buckets held in memory while the store refuses writes: the 30 days the file keeps. */
const MAX_PENDING_HOURS = HOURLY_KEEP_MS / HOUR_MS;

type Counts = Map<string, number>;
type UsageSlots = Map<string, { event: string; feature: string; totals: UsageTotals }>;
/** A batch taken out of memory by a flush and not yet in the committed document. */
interface Flight {
  tools: Map<string, Counts>;
  hours: Map<string, Counts>;
  usage: UsageSlots;
  /** the committed document the batch's update was applied to; unset until the update runs */
  base?: unknown;
}

/**
 * Counters per tool and result, and the local totals of usage events, kept
 * beside the settings. Counted in memory on the hot path and folded into the
 * options file every few seconds, so a tool call never waits for a file
 * write. What waits in memory is already aggregated (tool x result, hour x
 * result, event x feature), so it stays small however long the store refuses
 * writes; and a tool name the registry does not know is counted under
 * UNKNOWN_TOOL, so no client decides what the file keeps.
 */
export class StatsRecorder implements UsageSink {
  private tools = new Map<string, Counts>();
  private hours = new Map<string, Counts>();
  private usage: UsageSlots = new Map();
  private flights = new Set<Flight>();

  constructor(
    private readonly store: DocumentStore<OptionsData>,
    private readonly clock: Clock,
    /** whether a tool name is one to keep by name (a registered tool, or a fixed pseudo-tool) */
    private readonly known: (tool: string) => boolean = () => true,
  ) {}

  count(tool: string, result: AuditResult): void {
    bump(this.tools, this.known(tool) ? tool : UNKNOWN_TOOL, result);
    const hour = new Date(this.clock.now()).toISOString().slice(0, 13);
    bump(this.hours, hour, result);
    if (this.hours.size > MAX_PENDING_HOURS) this.hours.delete(this.hours.keys().next().value!);
  }

  /** The local usage sink: totals per event name and feature, for the Usage screen. */
  record(event: RecordedUsage): void {
    const key = `${event.event}\n${event.feature}`;
    let slot = this.usage.get(key);
    if (!slot)
      this.usage.set(
        key,
        (slot = {
          event: event.event,
          feature: event.feature,
          totals: { events: 0, units: 0, tokens_input: 0, tokens_output: 0 },
        }),
      );
    addTotals(slot.totals, event);
  }

  /** Persisted stats plus what is still in memory. */
  snapshot(): Stats {
    const doc = this.store.read();
    const s = structuredClone(doc.stats);
    // A batch being flushed is in neither place until its write commits (the store swaps in a new
    // document then): counted here while the committed document is still the one it was applied to.
    for (const f of this.flights)
      if (f.base === undefined || f.base === doc) this.foldInto(s, f.tools, f.hours, f.usage);
    this.foldInto(s, this.tools, this.hours, this.usage);
    return s;
  }

  async flush(): Promise<void> {
    if (this.tools.size === 0 && this.hours.size === 0 && this.usage.size === 0) return;
    const [tools, hours, usage] = [this.tools, this.hours, this.usage];
    const flight: Flight = { tools, hours, usage };
    this.flights.add(flight);
    this.tools = new Map();
    this.hours = new Map();
    this.usage = new Map();
    const now = this.clock.now();
    try {
      await this.store.update((d) => {
        flight.base = this.store.read();
        this.foldInto(d.stats, tools, hours, usage);
        d.stats.since ??= new Date(now).toISOString();
        const cutoff = new Date(now - HOURLY_KEEP_MS).toISOString().slice(0, 13);
        for (const hour of Object.keys(d.stats.hourly)) if (hour < cutoff) delete d.stats.hourly[hour];
      });
    } catch (e) {
      // Put the batch back, merged with what came in meanwhile: still one entry per key.
      for (const [k, c] of tools) for (const [r, n] of c) bump(this.tools, k, r, n);
      for (const [k, c] of hours) for (const [r, n] of c) bump(this.hours, k, r, n);
      for (const [k, u] of usage) {
        const mine = this.usage.get(k);
        if (mine) addTotals(mine.totals, u.totals);
        else this.usage.set(k, u);
      }
      throw e;
    } finally {
      this.flights.delete(flight);
    }
  }

  private foldInto(s: Stats, tools: Map<string, Counts>, hours: Map<string, Counts>, usage: UsageSlots): void {
    for (const [tool, counts] of tools)
      addCounts(
        ownEntry(s.tools, tool, () => ({})),
        counts,
      );
    for (const [hour, counts] of hours)
      addCounts(
        ownEntry(s.hourly, hour, () => ({})),
        counts,
      );
    for (const { event, feature, totals } of usage.values()) {
      const byFeature = ownEntry(s.usage, event, () => ({}));
      addTotals(
        ownEntry(byFeature, feature, () => ({ events: 0, units: 0, tokens_input: 0, tokens_output: 0 })),
        totals,
      );
    }
  }
}

function bump(map: Map<string, Counts>, key: string, result: string, n = 1): void {
  let c = map.get(key);
  if (!c) map.set(key, (c = new Map()));
  c.set(result, (c.get(result) ?? 0) + n);
}

function addCounts(into: Record<string, number>, counts: Counts): void {
  for (const [result, n] of counts) into[result] = (Object.hasOwn(into, result) ? into[result]! : 0) + n;
}

function addTotals(
  into: UsageTotals,
  add: { units: number; tokens_input: number; tokens_output: number; events?: number },
): void {
  into.events += add.events ?? 1;
  into.units += add.units;
  into.tokens_input += add.tokens_input;
  into.tokens_output += add.tokens_output;
}
