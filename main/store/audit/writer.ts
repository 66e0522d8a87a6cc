import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { AuditFileRecord, AuditFileSet } from './file-set.ts';
import type { SummaryFields } from './summary.ts';
import { addToSummary } from './summary.ts';
import { errorCode } from '../../lib/os-error.ts';

/** One serialized entry waiting for the disk. `text` ends with a newline. */
export interface QueuedLine {
  text: string;
  bytes: number;
  fields: SummaryFields;
}

/** Lines kept in memory while the disk refuses writes; past this the oldest are dropped, loudly. */
const MAX_QUEUED = 200_000;
/** Upper bound of one write() call. */
const MAX_WRITE_BYTES = 4 * 1024 * 1024;
const RETRY_FIRST_MS = 100;
/**
 * Lines are gathered this long before a write, so a busy gateway writes one
 * batch per window instead of one line per call (each write costs a trip
 * through the thread pool and a turn of the event loop, the largest part of
 * a call's audit cost). flush() does not wait for the window.
 */
const BATCH_WINDOW_MS = 5;
const RETRY_MAX_MS = 30_000;

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * Turns appends into batched writes: every line queued within a few
 * milliseconds (BATCH_WINDOW_MS) goes out in one write, in order, to the newest file, which rolls over before a
 * line would take it past `maxFileBytes` (a line is never split; a line
 * longer than the limit gets a file of its own). A failed write keeps the
 * unwritten lines queued, logs, and retries with backoff; lines the disk did
 * take are never written twice.
 */
export class AuditWriter {
  private queue: QueuedLine[] = [];
  private accepted = 0;
  private done = 0;
  private waiters: Waiter[] = [];
  private active: { rec: AuditFileRecord; fh: FileHandle } | null = null;
  private reopen: AuditFileRecord | null;
  private scheduled = false;
  private draining = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  /** the write error of the current run of failures, and when it began (null while writes go through) */
  private failing: { error: string; since: number } | null = null;
  private lock: Promise<unknown> = Promise.resolve();
  /** lines known to be on disk: written and fsynced (a sealed file was synced when sealed) */
  private synced = 0;
  private syncing: Promise<void> | null = null;

  constructor(
    private readonly files: AuditFileSet,
    private readonly maxFileBytes: number,
    private readonly clock: Clock,
    private readonly log: Logger,
    appendable: AuditFileRecord | null,
  ) {
    this.reopen = appendable;
  }

  enqueue(line: QueuedLine): void {
    this.queue.push(line);
    this.accepted++;
    if (this.queue.length > MAX_QUEUED) {
      const dropped = this.queue.splice(0, this.queue.length - MAX_QUEUED).length;
      this.settle(dropped);
      this.log.error('audit: the disk has refused writes for too long; oldest unwritten entries dropped', { dropped });
    }
    this.schedule();
  }

  /** Resolves once every line enqueued before the call is written; rejects when a write attempt fails. */
  flush(): Promise<void> {
    const upTo = this.accepted;
    if (this.done >= upTo) return Promise.resolve();
    const p = new Promise<void>((resolve, reject) => this.waiters.push({ upTo, resolve, reject }));
    // A flush does not wait out a retry backoff: it tries now.
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    this.kick();
    return p;
  }

  /**
   * Like flush, then fsyncs the file the lines went to: once this resolves
   * they survive a crash of the process or the machine. Concurrent callers
   * share one fsync (group commit).
   */
  async sync(): Promise<void> {
    await this.flush();
    const upTo = this.done;
    while (this.synced < upTo) {
      this.syncing ??= this.exclusive(async () => {
        const through = this.done;
        if (this.active) await this.active.fh.datasync();
        this.synced = Math.max(this.synced, through);
      }).finally(() => {
        this.syncing = null;
      });
      await this.syncing;
    }
  }

  /** The write error while the disk refuses lines (they stay queued and are retried), else null. */
  fault(): { error: string; since: number } | null {
    return this.failing;
  }

  isActive(rec: AuditFileRecord): boolean {
    return this.active?.rec === rec || this.reopen === rec;
  }

  /** Closes the newest file when it holds nothing newer than `cutoffMs` and nothing waits, so sweep may delete it. */
  retireIfOlderThan(cutoffMs: number): Promise<void> {
    return this.exclusive(async () => {
      if (this.queue.length > 0) return;
      const rec = this.active?.rec ?? this.reopen;
      if (!rec || rec.summary.maxMs === null || rec.summary.maxMs >= cutoffMs) return;
      this.reopen = null;
      await this.sealActive();
    });
  }

  /** Writes what is queued and closes the file. Rejects (after logging) when lines could not be written. */
  async close(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    let failure: unknown = null;
    await this.flush().catch((e: unknown) => (failure = e));
    await this.exclusive(() => this.sealActive());
    if (failure !== null) {
      if (this.retryTimer) clearTimeout(this.retryTimer);
      this.retryTimer = null;
      const lost = this.queue.length;
      this.queue = [];
      this.settle(lost);
      this.log.error('audit: closing with entries the disk did not take; they are lost', {
        lost,
        error: String(failure),
      });
      throw failure;
    }
  }

  private schedule(): void {
    if (this.scheduled || this.draining || this.retryTimer) return;
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      this.kick();
    }, BATCH_WINDOW_MS);
  }

  private kick(): void {
    if (this.draining) return;
    this.draining = true;
    void this.exclusive(() => this.drain()).finally(() => {
      this.draining = false;
      if (this.queue.length > 0 && !this.retryTimer) this.schedule();
    });
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.lock.then(fn);
    this.lock = p.catch(() => undefined);
    return p;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const progress = { written: 0 };
      try {
        await this.writeBatch(batch, progress);
        this.failures = 0;
        this.failing = null;
      } catch (e) {
        this.failing ??= { error: errorCode(e), since: this.clock.now() };
        this.queue = batch.slice(progress.written).concat(this.queue);
        this.failures++;
        const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (this.failures - 1));
        this.log.error('audit: write failed; entries stay queued and are retried', {
          error: String(e),
          queued: this.queue.length,
          attempt: this.failures,
          retry_in_ms: delay,
        });
        this.failWaiters(e instanceof Error ? e : new Error(String(e)));
        this.retryTimer = setTimeout(() => {
          this.retryTimer = null;
          this.kick();
        }, delay);
        this.retryTimer.unref();
        return;
      }
    }
  }

  private async writeBatch(batch: QueuedLine[], progress: { written: number }): Promise<void> {
    while (progress.written < batch.length) {
      const act = await this.ensureActive();
      const start = progress.written;
      const used = act.rec.summary.bytes;
      let end = start;
      let size = 0;
      while (end < batch.length) {
        const b = (batch[end] as QueuedLine).bytes;
        const fitsAlone = used === 0 && end === start;
        if (!fitsAlone && (used + size + b > this.maxFileBytes || size + b > MAX_WRITE_BYTES)) break;
        size += b;
        end++;
      }
      if (end === start) {
        await this.sealActive();
        continue;
      }
      let text = '';
      for (let i = start; i < end; i++) text += (batch[i] as QueuedLine).text;
      const buf = Buffer.from(text, 'utf8');
      let wrote = 0;
      try {
        while (wrote < buf.length) {
          const { bytesWritten } = await act.fh.write(buf, wrote, buf.length - wrote);
          wrote += bytesWritten;
        }
      } catch (e) {
        // Acknowledge the lines the disk took whole; a cut line stays behind as a torn line readers skip.
        let acked = 0;
        let i = start;
        for (; i < end && acked + (batch[i] as QueuedLine).bytes <= wrote; i++) {
          acked += (batch[i] as QueuedLine).bytes;
          addToSummary(act.rec.summary, (batch[i] as QueuedLine).fields, (batch[i] as QueuedLine).bytes);
        }
        this.settle(i - start);
        progress.written = i;
        if (acked !== wrote) await this.sealActive().catch(() => undefined);
        throw e;
      }
      for (let i = start; i < end; i++)
        addToSummary(act.rec.summary, (batch[i] as QueuedLine).fields, (batch[i] as QueuedLine).bytes);
      progress.written = end;
      this.settle(end - start);
    }
  }

  private async ensureActive(): Promise<{ rec: AuditFileRecord; fh: FileHandle }> {
    if (this.active) return this.active;
    if (this.reopen) {
      const rec = this.reopen;
      this.reopen = null;
      try {
        this.active = { rec, fh: await open(rec.path, 'a', 0o600) };
        return this.active;
      } catch (e) {
        this.log.warn('audit: could not reopen the newest file; starting a new one', {
          file: rec.name,
          error: String(e),
        });
      }
    }
    this.active = await this.files.create(this.clock.now());
    return this.active;
  }

  private async sealActive(): Promise<void> {
    const act = this.active;
    if (!act) return;
    this.active = null;
    const through = this.done;
    try {
      await act.fh.datasync();
      this.synced = Math.max(this.synced, through);
    } catch {
      // the data is with the OS already; a failed sync is not worth losing the close over
    }
    await act.fh.close().catch(() => undefined);
    await this.files.seal(act.rec);
  }

  private settle(n: number): void {
    this.done += n;
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.upTo <= this.done) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  private failWaiters(e: Error): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w.reject(e);
  }
}
