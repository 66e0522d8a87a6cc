import { once } from 'node:events';
import type { z } from 'zod';
import type { AuditPage, AuditQueryInput, AuditResult } from '../../contract/audit.ts';
import { AuditEntry, AuditQuery } from '../../contract/audit.ts';
import { GatehouseError } from '../../core/errors.ts';
import type { StoragePart } from '../../core/calls/storage-guard.ts';
import type { AuditReader, AuditSink, AuditTrail } from '../../core/ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import { systemClock } from '../../lib/clock.ts';
import { CSV_HEADER, entryToCsvRow, entryToJsonLine } from './export-format.ts';
import { AuditFileSet, type AuditFileRecord } from './file-set.ts';
import type { FilterInput } from './filter.ts';
import { compileFilter, decodeCursor, encodeCursor } from './filter.ts';
import type { ScanHit } from './scan.ts';
import { scanNewestFirst } from './scan.ts';
import { summaryFieldsOf } from './summary.ts';
import { AuditWriter } from './writer.ts';
import { createLogger } from '../../lib/logger.ts';
import { describeIssues } from '../zod-issues.ts';
import { wellFormed } from '../../lib/well-formed.ts';

export interface AuditLogOptions {
  /** `<dataDir>/audit`; created 0700 */
  dir: string;
  /** a file rolls over before an entry would take it past this; default 16 MiB */
  maxFileBytes?: number;
  /** read on every sweep, so a settings change applies without a restart; default 90 */
  retentionDays?: () => number;
  /** the most all files may take, in bytes, read on every sweep; 0 (the default): no cap */
  maxTotalBytes?: () => number;
  clock?: Clock;
  log?: Logger;
}

const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;
const DEFAULT_RETENTION_DAYS = 90;
const DAY_MS = 86_400_000;
const EXPORT_CHUNK_CHARS = 64 * 1024;
const CLOCK_SLACK_MS = 3600_000;

/**
 * The audit log: append-only JSONL files in one folder, rotated by size and
 * deleted by age. `append` is synchronous and never throws (a tool call must
 * not fail because of its audit entry); the entry is validated, serialized at
 * once and written with the others of the same tick.
 *
 * Order: "newest first" means most recently appended first, for `query` and
 * for both export formats, so an export equals every query page concatenated.
 * Cursors name a position in the files, not an index, so entries appended
 * between two pages never shift or repeat the next page.
 */
export class AuditLog implements AuditSink, AuditReader, AuditTrail {
  private readonly listeners = new Set<(e: AuditEntry) => void>();
  private closed = false;

  private constructor(
    private readonly files: AuditFileSet,
    private readonly writer: AuditWriter,
    private readonly retentionDays: () => number,
    private readonly maxTotalBytes: () => number,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  static async open(opts: AuditLogOptions): Promise<AuditLog> {
    const maxFileBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    if (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 1) {
      throw new GatehouseError('invalid_value', 'audit log: maxFileBytes must be a positive whole number of bytes', {
        field: 'maxFileBytes',
      });
    }
    // Without a logger from the service, failures must still be seen: warnings and errors go to stderr, redacted.
    const log = opts.log ?? createLogger({ level: 'warn', json: true });
    const clock = opts.clock ?? systemClock;
    const { set, appendable } = await AuditFileSet.load(opts.dir, log, maxFileBytes);
    const writer = new AuditWriter(set, maxFileBytes, clock, log, appendable);
    return new AuditLog(
      set,
      writer,
      opts.retentionDays ?? (() => DEFAULT_RETENTION_DAYS),
      opts.maxTotalBytes ?? (() => 0),
      clock,
      log,
    );
  }

  append(entry: AuditEntry): void {
    try {
      if (this.closed) {
        this.log.error('audit: entry appended after the log was closed; dropped', { id: safeId(entry) });
        return;
      }
      const parsed = AuditEntry.safeParse(entry);
      if (!parsed.success) {
        const fields = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || '(entry)'))];
        this.log.error('audit: entry rejected, invalid fields', { id: safeId(entry), fields });
        return;
      }
      const e = wellFormedEntry(parsed.data);
      const text = `${entryToJsonLine(e)}\n`;
      this.writer.enqueue({ text, bytes: Buffer.byteLength(text, 'utf8'), fields: summaryFieldsOf(e) });
      for (const l of this.listeners) {
        try {
          l(e);
        } catch (err) {
          this.log.warn('audit: an append listener threw', { error: String(err) });
        }
      }
    } catch (err) {
      this.log.error('audit: append failed', { id: safeId(entry), error: String(err) });
    }
  }

  /** Resolves when every entry appended so far is written to its file. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** The audit log as a part of the storage guard: failing while its writer cannot write (lines stay queued). */
  readonly storage: StoragePart = {
    fault: () => {
      const f = this.writer.fault();
      return f && { part: 'audit', error: f.error, since: new Date(f.since).toISOString() };
    },
    probe: async () => {
      await this.writer.flush().catch(() => undefined);
      return this.storage.fault();
    },
  };

  /** Resolves when every entry appended so far is written and fsynced: what a decision waits for before it is acknowledged. */
  sync(): Promise<void> {
    return this.writer.sync();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await this.writer.close();
  }

  onAppend(listener: (e: AuditEntry) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async query(q: AuditQueryInput): Promise<AuditPage> {
    const parsed = AuditQuery.safeParse(q);
    if (!parsed.success) throw invalidQuery(parsed.error);
    const { limit, cursor } = parsed.data;
    const filter = compileFilter(parsed.data);
    const after = cursor === undefined ? null : decodeCursor(cursor);
    await this.settleWrites();
    const hits: ScanHit[] = [];
    // One more than the page: whether it exists decides next_cursor.
    for await (const chunk of scanNewestFirst(this.files.snapshot(), filter, after, limit + 1)) hits.push(...chunk);
    const page = hits.slice(0, limit);
    const last = page[page.length - 1];
    return {
      entries: page.map((h) => h.entry),
      next_cursor: hits.length > limit && last ? encodeCursor({ seq: last.seq, offset: last.offset }) : null,
    };
  }

  /**
   * Whether an entry for this staged write with this result exists at or
   * after `sinceMs` (an hour earlier, in case the clock stepped back). For
   * crash recovery: scans only the files of that window, jumping from one
   * occurrence of the staged id to the previous.
   */
  async hasStagedEntry(stagedId: string, result: AuditResult, sinceMs: number): Promise<boolean> {
    const filter = compileFilter({ result, from: new Date(Math.max(0, sinceMs - CLOCK_SLACK_MS)).toISOString() });
    filter.needles.unshift(Buffer.from(`,"staged_id":${JSON.stringify(stagedId)}`, 'utf8'));
    await this.settleWrites();
    for await (const chunk of scanNewestFirst(this.files.snapshot(), filter, null, Infinity)) {
      if (chunk.some((h) => h.entry.staged_id === stagedId)) return true;
    }
    return false;
  }

  /**
   * Writes every matching entry to `out`, newest first like `query`, and
   * returns how many. CSV starts with a header row. Waits for `out` to drain
   * when it asks to; does not end it.
   */
  async export(
    q: Omit<AuditQueryInput, 'limit' | 'cursor'>,
    format: 'jsonl' | 'csv',
    out: NodeJS.WritableStream,
  ): Promise<number> {
    if (format !== 'jsonl' && format !== 'csv')
      throw new GatehouseError('invalid_value', 'audit export: format must be "jsonl" or "csv"', { field: 'format' });
    const parsed = AuditQuery.omit({ limit: true, cursor: true }).safeParse(q);
    if (!parsed.success) throw invalidQuery(parsed.error);
    const filter = compileFilter(parsed.data as FilterInput);
    await this.settleWrites();
    const toText = format === 'csv' ? entryToCsvRow : (e: AuditEntry) => `${entryToJsonLine(e)}\n`;
    let pending = format === 'csv' ? CSV_HEADER : '';
    let count = 0;
    for await (const chunk of scanNewestFirst(this.files.snapshot(), filter, null, Infinity)) {
      for (const h of chunk) {
        pending += toText(h.entry);
        count++;
        if (pending.length >= EXPORT_CHUNK_CHARS) {
          await writeOut(out, pending);
          pending = '';
        }
      }
    }
    if (pending) await writeOut(out, pending);
    return count;
  }

  /**
   * Deletes the files whose newest entry is older than the retention period
   * (a file without a readable entry counts by its creation time), then,
   * under a size cap, the oldest files until the rest fit. The file being
   * written is closed first when it is that old, and is never deleted for
   * size (so the log may pass the cap by at most that one file). Returns files
   * deleted.
   */
  async sweep(): Promise<number> {
    return (await this.sweepByAge()) + (await this.sweepBySize());
  }

  private async sweepBySize(): Promise<number> {
    let cap: number;
    try {
      cap = this.maxTotalBytes();
    } catch (e) {
      this.log.warn('audit: could not read the size cap; nothing swept for size', { error: String(e) });
      return 0;
    }
    if (typeof cap !== 'number' || !Number.isFinite(cap) || cap <= 0) return 0;
    const files = this.files.list();
    let total = files.reduce((sum, rec) => sum + rec.summary.bytes, 0);
    let removed = 0;
    // Oldest first; the file being written stays.
    for (const rec of [...files].sort((a, b) => a.seq - b.seq)) {
      if (total <= cap) break;
      if (this.writer.isActive(rec)) continue;
      if (!(await this.tryRemove(rec, 'a file over the size cap'))) continue;
      total -= rec.summary.bytes;
      removed++;
    }
    if (removed > 0) this.log.info('audit: oldest files deleted for the size cap', { files: removed, cap_bytes: cap });
    return removed;
  }

  private async sweepByAge(): Promise<number> {
    let days: number;
    try {
      days = this.retentionDays();
    } catch (e) {
      this.log.warn('audit: could not read the retention setting; nothing swept', { error: String(e) });
      return 0;
    }
    if (typeof days !== 'number' || !Number.isFinite(days) || days <= 0) {
      this.log.warn('audit: retention is not a positive number of days; nothing swept', { days });
      return 0;
    }
    const cutoff = this.clock.now() - days * DAY_MS;
    if (!this.closed) await this.writer.retireIfOlderThan(cutoff);
    let removed = 0;
    for (const rec of [...this.files.list()]) {
      if (this.writer.isActive(rec)) continue;
      const newest = rec.summary.maxMs ?? rec.createdMs;
      if (newest >= cutoff) continue;
      if (await this.tryRemove(rec, 'an expired file')) removed++;
    }
    if (removed > 0) this.log.info('audit: expired files deleted', { files: removed, retention_days: days });
    return removed;
  }

  /** A file that cannot be deleted now is left for the next sweep, and said. */
  private async tryRemove(rec: AuditFileRecord, what: string): Promise<boolean> {
    try {
      await this.files.remove(rec);
      return true;
    } catch (e) {
      this.log.warn(`audit: could not delete ${what}`, { file: rec.name, error: String(e) });
      return false;
    }
  }

  /** Readers see what was appended before they started; a disk that refuses writes must not block them. */
  private async settleWrites(): Promise<void> {
    if (!this.closed) await this.writer.flush().catch(() => undefined);
  }
}

async function writeOut(out: NodeJS.WritableStream, text: string): Promise<void> {
  // A destroyed stream never drains: waiting on it would hang the export.
  if ((out as { destroyed?: boolean }).destroyed)
    throw new GatehouseError('internal_error', 'audit export: the output closed before the export finished');
  if (out.write(text)) return;
  const ac = new AbortController();
  try {
    await Promise.race([
      once(out, 'drain', { signal: ac.signal }),
      once(out, 'close', { signal: ac.signal }).then(() => {
        throw new GatehouseError('internal_error', 'audit export: the output closed before the export finished');
      }),
    ]);
  } finally {
    ac.abort();
  }
}

function invalidQuery(error: z.ZodError): GatehouseError {
  const { text, issues } = describeIssues(error);
  return new GatehouseError('invalid_value', `audit query: ${text}`, { fields: issues.map((i) => i.path) });
}

/** Client strings (tool names, targets, client names) may carry lone surrogates; the file must stay valid UTF-8 for jq. */
function wellFormedEntry(e: AuditEntry): AuditEntry {
  const out: Record<string, unknown> = { ...e };
  for (const [k, v] of Object.entries(out)) if (typeof v === 'string') out[k] = wellFormed(v);
  return out as AuditEntry;
}

function safeId(entry: unknown): string | null {
  const id = (entry as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id.slice(0, 100) : null;
}
