import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  truncateSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { CloudUsageEvent } from '../contract/cloud/usage.ts';
import { errorCode } from '../lib/os-error.ts';
import { lazySchema } from '../contract/lazy-schema.ts';

/**
 * The usage outbox on disk: an append-only JSON-lines journal. A queued
 * event is one `{"a": event}` line written with a synchronous write before
 * record() returns, so a process killed right after has it on disk (the
 * kernel finishes a write a killed process started). What the gateway
 * answered is appended as it is learned: `{"d": [...ids]}` delivered,
 * `{"r": [...]}` rejected for good, `{"x": [...], "why"}` abandoned. Replay
 * gives the pending events in order; an event that was sent but whose
 * answer was not yet written is sent again and comes back `duplicate`,
 * counted once by the gateway (the event_id is unique there).
 *
 * Compaction rewrites the file to its pending events (temp file, fsync,
 * rename), so a kill during it leaves the old journal or the new one.
 */

export interface Totals {
  accepted: number;
  duplicate: number;
  rejected: number;
  abandoned: number;
}

export interface Rejection {
  event_id: string | null;
  reason: string;
  message: string;
}

const Rejections = lazySchema(() =>
  z
    .array(z.object({ event_id: z.string().nullable(), reason: z.string().max(100), message: z.string().max(500) }))
    .max(200),
);
const Record_ = lazySchema(() =>
  z.union([
    z.strictObject({ a: CloudUsageEvent }),
    z.strictObject({ d: z.array(z.string()).max(200), dup: z.array(z.string()).max(200).optional() }),
    z.strictObject({ r: Rejections }),
    z.strictObject({ x: z.array(z.string()), why: z.string().max(200) }),
    z.strictObject({
      h: z.object({
        accepted: z.number().int(),
        duplicate: z.number().int(),
        rejected: z.number().int(),
        abandoned: z.number().int(),
        recent: Rejections,
      }),
    }),
  ]),
);
type JournalRecord = z.infer<typeof Record_>;

export const RECENT_REJECTIONS = 50;

export interface Replayed {
  pending: Map<string, CloudUsageEvent>;
  totals: Totals;
  recent: Rejection[];
  /** lines that could not be read (a torn tail is cut off and not counted) */
  unreadable: number;
  lines: number;
}

export class OutboxJournal {
  private fd: number;
  private lines: number;
  /** the file's size: where a torn write is cut back to */
  private bytes: number;
  /** records the disk refused, in order (write()) */
  private backlog: JournalRecord[] = [];
  private failing: { error: string; since: number } | null = null;

  private constructor(
    readonly file: string,
    replayed: Replayed,
  ) {
    this.fd = openSync(file, 'a', 0o600);
    this.bytes = fstatSync(this.fd).size;
    this.lines = replayed.lines;
  }

  /** Opens (creating) the journal and replays it. */
  static open(file: string): { journal: OutboxJournal; replayed: Replayed } {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const replayed = replay(file);
    return { journal: new OutboxJournal(file, replayed), replayed };
  }

  get lineCount(): number {
    return this.lines;
  }

  /**
   * Synchronous, so the record is on disk (in the page cache) when this returns. A write the disk cut short
   * (a full disk takes what fits) is taken back before the error goes up: a torn line would join the next one.
   */
  append(rec: JournalRecord): void {
    const buf = Buffer.from(`${JSON.stringify(rec)}\n`, 'utf8');
    let done = 0;
    try {
      while (done < buf.length) done += writeSync(this.fd, buf, done, buf.length - done);
    } catch (e) {
      if (done > 0) {
        try {
          ftruncateSync(this.fd, this.bytes);
        } catch {
          // left torn: replay cuts a torn last line, and one in the middle is skipped as unreadable
        }
      }
      throw e;
    }
    this.bytes += buf.length;
    this.lines++;
  }

  /**
   * Appends, never throwing: when the disk refuses (ENOSPC, EIO), the record
   * is held in memory, in order behind any held before it, and written by a
   * later write or retry(). Answers whether it is on disk now.
   */
  write(rec: JournalRecord, now: number): boolean {
    this.backlog.push(rec);
    return this.retry(now);
  }

  /** Writes the held records, in order, until the disk refuses one; answers whether none is left. */
  retry(now: number): boolean {
    while (this.backlog.length > 0) {
      try {
        this.append(this.backlog[0]!);
      } catch (e) {
        this.failing ??= { error: errorCode(e), since: now };
        return false;
      }
      this.backlog.shift();
    }
    this.failing = null;
    return true;
  }

  /** The write error while records are held in memory, else null. */
  fault(): { error: string; since: number } | null {
    return this.failing;
  }

  /** Events (`a` records) held in memory, not yet on disk. */
  get heldEvents(): number {
    return this.backlog.reduce((n, r) => n + ('a' in r ? 1 : 0), 0);
  }

  /** Rewrites the journal to exactly this state. */
  compact(pending: Iterable<CloudUsageEvent>, totals: Totals, recent: Rejection[]): void {
    const temp = `${this.file}.compact-${process.pid}`;
    const out: string[] = [JSON.stringify({ h: { ...totals, recent: recent.slice(0, RECENT_REJECTIONS) } })];
    for (const e of pending) out.push(JSON.stringify({ a: e }));
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeSync(fd, `${out.join('\n')}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, this.file);
    closeSync(this.fd);
    this.fd = openSync(this.file, 'a', 0o600);
    this.bytes = fstatSync(this.fd).size;
    this.lines = out.length;
    // the file is the whole state now: what was held in memory is in it
    this.backlog = [];
    this.failing = null;
  }

  /** Forces what was appended to stable storage (power loss; a killed process loses nothing without it). */
  sync(): void {
    fsyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

function replay(file: string): Replayed {
  const out: Replayed = {
    pending: new Map(),
    totals: { accepted: 0, duplicate: 0, rejected: 0, abandoned: 0 },
    recent: [],
    unreadable: 0,
    lines: 0,
  };
  const temp = `${file}.compact-${process.pid}`;
  if (existsSync(temp)) unlinkSync(temp);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw e;
  }
  const end = text.lastIndexOf('\n') + 1;
  // A torn last line (a write cut by a power loss): cut it off, or the next append would join it.
  if (end < text.length) truncateSync(file, Buffer.byteLength(text.slice(0, end)));
  for (const line of text.slice(0, end).split('\n')) {
    if (!line) continue;
    out.lines++;
    let rec: JournalRecord;
    try {
      rec = Record_.parse(JSON.parse(line));
    } catch {
      out.unreadable++;
      continue;
    }
    apply(out, rec);
  }
  return out;
}

function apply(s: Replayed, rec: JournalRecord): void {
  if ('a' in rec) {
    if (!s.pending.has(rec.a.event_id)) s.pending.set(rec.a.event_id, rec.a);
  } else if ('d' in rec) {
    for (const id of rec.d) if (s.pending.delete(id)) s.totals.accepted++;
    for (const id of rec.dup ?? []) if (s.pending.delete(id)) s.totals.duplicate++;
  } else if ('r' in rec) {
    for (const r of rec.r) {
      if (r.event_id !== null && !s.pending.delete(r.event_id)) continue;
      s.totals.rejected++;
      s.recent.unshift(r);
    }
    s.recent.length = Math.min(s.recent.length, RECENT_REJECTIONS);
  } else if ('x' in rec) {
    for (const id of rec.x) if (s.pending.delete(id)) s.totals.abandoned++;
  } else {
    const { recent, ...totals } = rec.h;
    s.totals = totals;
    s.recent = recent.slice(0, RECENT_REJECTIONS);
  }
}
