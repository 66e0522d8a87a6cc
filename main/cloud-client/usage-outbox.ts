import { createHash } from 'node:crypto';
import { CloudUsageEvent, USAGE_BATCH_MAX, type UsageRecordAnswer } from '../contract/cloud/usage.ts';
import type { OutboxView } from '../contract/cloud-status.ts';
import type { RecordedUsage, UsageSink } from '../core/ports/ports.ts';
import type { StoragePart } from '../core/calls/storage-guard.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { CallMode } from './cloud-http.ts';
import { OutboxJournal, RECENT_REJECTIONS, type Rejection, type Totals } from './outbox-journal.ts';
import { QuotaRefusals, sortAnswers } from './outbox-answers.ts';

/**
 * The usage outbox (docs/cloud-client.md "Behaviour in short"), the cloud side of the
 * UsageSink port: every event is written to the journal before record()
 * returns, then uploaded in batches of up to 100 on an interval, as soon as
 * a batch is full, and on demand, with an Idempotency-Key that is the hash
 * of the exact body (a retry, or a resend after a restart, of the same batch
 * is the same request; the gateway's unique event_id covers the rest).
 * Bounded: past `capacity` events are refused, counted and logged, never
 * dropped silently. AI generations are not queued: the cloud records those
 * itself when it serves them.
 */

/** Events the gateway records itself when it serves them (ai/generate). */
export const CLOUD_RECORDED_EVENTS: ReadonlySet<string> = new Set(['ai.generation.completed']);

export interface OutboxOptions {
  file: string;
  clock: Clock;
  log: Logger;
  /** the connected site, or null (events are then counted locally only) */
  siteId: () => string | null;
  /** gateway time minus local time, applied when a batch is sent */
  offsetMs: () => number;
  upload: (body: Buffer, idempotencyKey: string, mode: CallMode) => Promise<UsageRecordAnswer>;
  capacity?: number;
  batchSize?: number;
  intervalMs?: number;
  /** what the outbox shows changed (a counter refused events): the console and the tray reload */
  onChange?: () => void;
}

export type FlushResult =
  { ok: true; sent: number; remaining: number } | { ok: false; sent: number; remaining: number; error: unknown };

/** What record() takes: the recorder's event (its id and time); the outbox stamps the connected site. */
export type OutboxInput = RecordedUsage;

const FULL_LOG_EVERY_MS = 60_000;

export class UsageOutbox implements UsageSink {
  readonly capacity: number;
  private readonly batchSize: number;
  private readonly journal: OutboxJournal;
  private readonly pending: Map<string, CloudUsageEvent>;
  private totals: Totals;
  private recent: Rejection[];
  private counters = { refused_full: 0, unconnected: 0, invalid: 0, cloud_recorded: 0 };
  private lastUploadAt: number | null = null;
  private lastFullLog = 0;
  private writable = true;
  /** counters that refused events, until they reset (quotaRefusals()) */
  private readonly quotas = new QuotaRefusals();
  private running: Promise<FlushResult> | null = null;
  /** events sent again once after the clock offset changed under their batch */
  private readonly restamped = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private soon: NodeJS.Timeout | null = null;

  constructor(private readonly o: OutboxOptions) {
    this.capacity = o.capacity ?? 20_000;
    this.batchSize = Math.min(o.batchSize ?? USAGE_BATCH_MAX, USAGE_BATCH_MAX);
    const { journal, replayed } = OutboxJournal.open(o.file);
    this.journal = journal;
    this.pending = replayed.pending;
    this.totals = replayed.totals;
    this.recent = replayed.recent;
    if (replayed.unreadable)
      o.log.warn(`cloud outbox: ${replayed.unreadable} unreadable line(s) in ${o.file} were skipped`, { file: o.file });
  }

  record(input: OutboxInput): void {
    if (CLOUD_RECORDED_EVENTS.has(input.event)) return void this.counters.cloud_recorded++;
    const siteId = this.o.siteId();
    if (!siteId) return void this.counters.unconnected++;
    if (this.pending.size >= this.capacity) return this.refuseFull(input.event);
    const now = this.o.clock.now();
    const parsed = CloudUsageEvent.safeParse({
      event_id: input.event_id,
      event: input.event,
      site_id: siteId,
      product: input.product,
      feature: input.feature,
      model: input.model ?? '',
      units: input.units,
      tokens_input: input.tokens_input ?? 0,
      tokens_output: input.tokens_output ?? 0,
      // local time: the clock offset is applied when the batch is sent (it may be learned later)
      timestamp: input.timestamp,
    });
    if (!parsed.success) {
      this.counters.invalid++;
      this.o.log.warn('cloud outbox: a usage event is not a valid cloud usage event and was not queued', {
        event: String(input.event).slice(0, 100),
        issue: parsed.error.issues[0]?.message,
      });
      return;
    }
    const e = parsed.data;
    if (this.pending.has(e.event_id)) return;
    // A disk that refuses the line does not cost the event: it is held in memory (and uploaded) until the file takes it.
    this.written(this.journal.write({ a: e }, now));
    this.pending.set(e.event_id, e);
    if (this.pending.size % this.batchSize === 0) this.flushSoon();
  }

  get depth(): number {
    return this.pending.size;
  }

  /** Uploads until the outbox is empty or a request fails; one run at a time (a call during a run waits for it, then runs). */
  flush(mode: CallMode = 'background'): Promise<FlushResult> {
    const prior = this.running;
    const run = (async () => {
      if (prior) await prior.catch(() => undefined);
      return this.upload(mode);
    })();
    this.running = run;
    void run.finally(() => {
      if (this.running === run) this.running = null;
    });
    return run;
  }

  start(intervalMs = this.o.intervalMs ?? 60_000): void {
    this.stop();
    this.timer = setInterval(() => {
      if (this.pending.size && !this.running && this.o.siteId()) void this.flush('background');
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearTimeout(this.soon);
    this.timer = this.soon = null;
  }

  /** Waits for a running upload, then closes the file. */
  async close(): Promise<void> {
    this.stop();
    await this.running?.catch(() => undefined);
    this.journal.close();
  }

  /** Events of a site identity that is gone: written off, counted, and said so. */
  abandonAll(why: string): number {
    const ids = [...this.pending.keys()];
    if (!ids.length) return 0;
    this.written(this.journal.write({ x: ids, why }, this.o.clock.now()));
    for (const id of ids) this.pending.delete(id);
    this.totals.abandoned += ids.length;
    this.compactIfLarge();
    this.o.log.warn(`cloud outbox: ${ids.length} usage event(s) were not uploaded and are written off: ${why}`);
    return ids.length;
  }

  /** The counters that refused events and have not reset: quota alerts for cloud status, the console and the tray. */
  quotaRefusals(): ReturnType<QuotaRefusals['list']> {
    return this.quotas.list(this.o.clock.now());
  }

  /**
   * A new site (or none): the counts, rejections and refusals of the old one
   * are not this one's. Call after abandonAll(); the journal says so too, so a
   * restart starts from zero.
   */
  startOver(): void {
    this.totals = { accepted: 0, duplicate: 0, rejected: 0, abandoned: 0 };
    this.recent = [];
    this.counters = { refused_full: 0, unconnected: 0, invalid: 0, cloud_recorded: 0 };
    this.lastUploadAt = null;
    this.quotas.clear();
    this.restamped.clear();
    this.written(this.journal.write({ h: { ...this.totals, recent: [] } }, this.o.clock.now()));
  }

  view(): OutboxView {
    const oldest = this.pending.values().next();
    return {
      depth: this.pending.size,
      capacity: this.capacity,
      full: this.pending.size >= this.capacity,
      refused_full: this.counters.refused_full,
      oldest_at: oldest.done ? null : oldest.value.timestamp,
      delivered: this.totals.accepted + this.totals.duplicate,
      accepted: this.totals.accepted,
      duplicate: this.totals.duplicate,
      rejected: this.totals.rejected,
      abandoned: this.totals.abandoned,
      unconnected: this.counters.unconnected,
      invalid: this.counters.invalid,
      cloud_recorded: this.counters.cloud_recorded,
      recent_rejections: this.recent.slice(0, 10),
      last_upload_at: this.lastUploadAt === null ? null : new Date(this.lastUploadAt).toISOString(),
      uploading: this.running !== null,
      unsaved: this.journal.heldEvents,
      write_error: this.journal.fault()?.error ?? null,
    };
  }

  private async upload(mode: CallMode): Promise<FlushResult> {
    let sent = 0;
    if (this.pending.size > 0) {
      try {
        this.journal.sync(); // what is about to be sent survives a power loss too
      } catch (e) {
        this.o.log.warn('cloud outbox: could not fsync the journal', { error: (e as Error).message });
      }
    }
    while (this.pending.size > 0 && this.o.siteId()) {
      const offset = this.o.offsetMs();
      const batch = [...take(this.pending.values(), this.batchSize)].map((e) => this.stamped(e, offset));
      const body = Buffer.from(JSON.stringify({ events: batch }), 'utf8');
      const key = `usage-${createHash('sha256').update(body).digest('base64url')}`;
      let answer: UsageRecordAnswer;
      try {
        answer = await this.o.upload(body, key, mode);
      } catch (error) {
        return { ok: false, sent, remaining: this.pending.size, error };
      }
      const before = this.pending.size;
      const restamped = this.settle(batch, answer, offset);
      sent += before - this.pending.size;
      this.lastUploadAt = this.o.clock.now();
      if (this.pending.size === before && !restamped) break; // the gateway answered nothing usable for this batch: do not spin
    }
    this.compactIfLarge();
    return { ok: true, sent, remaining: this.pending.size };
  }

  /** The event as sent: its local time moved by the clock offset, and never in the gateway's future. */
  private stamped(e: CloudUsageEvent, offset: number): CloudUsageEvent {
    const now = this.o.clock.now() + offset;
    const at = Math.min(Date.parse(e.timestamp) + offset, now);
    return { ...e, timestamp: new Date(at).toISOString() };
  }

  /**
   * Applies the gateway's per-event answers (outbox-answers.ts). A
   * `timestamp_out_of_range` on a batch stamped with an offset the client has
   * since corrected (the request itself re-synced the clock on token_expired,
   * but its body was already made) stays queued once, to be stamped again.
   * Answers whether any did.
   */
  private settle(batch: CloudUsageEvent[], answer: UsageRecordAnswer, offsetUsed: number): boolean {
    const { delivered, dup, rejected, again, quotas } = sortAnswers(
      batch,
      answer,
      (id) => this.o.offsetMs() !== offsetUsed && !this.restamped.has(id),
    );
    for (const id of again) this.restamped.add(id);
    const now = this.o.clock.now();
    if (delivered.length || dup.length)
      this.written(this.journal.write({ d: delivered, ...(dup.length ? { dup } : {}) }, now));
    if (rejected.length) this.written(this.journal.write({ r: rejected }, now));
    for (const id of delivered) if (this.pending.delete(id)) this.totals.accepted++;
    for (const id of dup) if (this.pending.delete(id)) this.totals.duplicate++;
    for (const r of rejected) {
      if (!this.pending.delete(r.event_id!)) continue;
      this.totals.rejected++;
      this.recent.unshift(r);
      this.o.log.warn('cloud outbox: the gateway refused a usage event for good', {
        event_id: r.event_id,
        reason: r.reason,
        message: r.message,
      });
    }
    this.recent.length = Math.min(this.recent.length, RECENT_REJECTIONS);
    if (this.restamped.size > this.capacity) this.restamped.clear();
    for (const q of quotas) this.quotas.note(q, now);
    if (quotas.length) this.o.onChange?.();
    return again.length > 0;
  }

  /** The outbox as a part of the storage guard (core/calls/storage-guard.ts): failing while records are held in memory. */
  readonly storage: StoragePart = {
    fault: () => {
      const f = this.journal.fault();
      return f && { part: 'usage outbox', error: f.error, since: new Date(f.since).toISOString() };
    },
    probe: async () => {
      this.written(this.journal.retry(this.o.clock.now()));
      return this.storage.fault();
    },
  };

  /** Says once per run of failures that the file refuses writes, and when it takes them again. */
  private written(ok: boolean): void {
    if (ok === this.writable) return;
    this.writable = ok;
    if (ok) this.o.log.info('cloud outbox: the outbox file takes writes again; the events held in memory are in it');
    else
      this.o.log.error(
        'cloud outbox: the outbox file refuses writes; events are held in memory (uploaded as usual) and written once it can',
        { error: this.journal.fault()?.error },
      );
  }

  private compactIfLarge(): void {
    if (this.journal.lineCount < 2 * this.pending.size + 1000) return;
    try {
      this.journal.compact(this.pending.values(), this.totals, this.recent);
    } catch (e) {
      this.o.log.warn('cloud outbox: compaction failed; the journal stays as it is', { error: (e as Error).message });
    }
  }

  private refuseFull(event: string): void {
    this.counters.refused_full++;
    const now = this.o.clock.now();
    if (now - this.lastFullLog >= FULL_LOG_EVERY_MS) {
      this.lastFullLog = now;
      this.o.log.error(
        `cloud outbox: full (${this.capacity} events waiting); usage events are being refused (${this.counters.refused_full} so far, the last one ${event.slice(0, 100)}) until the gateway can be reached`,
      );
    }
  }

  private flushSoon(): void {
    if (this.soon || !this.o.siteId()) return;
    this.soon = setTimeout(() => {
      this.soon = null;
      void this.flush('background');
    }, 0);
    this.soon.unref();
  }
}

function* take<T>(it: Iterator<T>, n: number): Generator<T> {
  for (let i = 0; i < n; i++) {
    const r = it.next();
    if (r.done) return;
    yield r.value;
  }
}
