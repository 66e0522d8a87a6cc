import type { Db } from '../db/db.ts';
import { insertLogEntries, pruneAccountLog, pruneLog, type RequestLogEntry } from '../repo/request-log-repo.ts';
import type { Logger } from '../../main/lib/logger.ts';

/**
 * The request log (enterprise log export): every answered request of a known account, written
 * in batches off the request path (one INSERT a second, not one per
 * request), so recording costs a request nothing. Bounded: at most
 * `maxBuffered` entries wait in memory (more are counted and dropped, with a
 * warning) and the table keeps `retentionDays`, at most `maxRowsPerAccount`
 * rows of one account (so a busy account cannot push another's out) and at
 * most `maxRows` in all.
 * A process killed hard loses at most its last second of entries.
 */
export interface RequestLogOptions {
  flushMs?: number;
  maxBuffered?: number;
  retentionDays?: number;
  maxRows?: number;
  maxRowsPerAccount?: number;
}

export class RequestLog {
  private buffer: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private dropped = 0;
  readonly retentionDays: number;
  readonly maxRows: number;
  readonly maxRowsPerAccount: number;
  /** entries this instance wrote per account since that account was last pruned */
  private written = new Map<string, number>();
  private readonly flushMs: number;
  private readonly maxBuffered: number;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    o: RequestLogOptions = {},
  ) {
    this.flushMs = o.flushMs ?? 1000;
    this.maxBuffered = o.maxBuffered ?? 10_000;
    this.retentionDays = o.retentionDays ?? 30;
    this.maxRows = o.maxRows ?? 5_000_000;
    this.maxRowsPerAccount = o.maxRowsPerAccount ?? 1_000_000;
  }

  record(e: RequestLogEntry): void {
    // The log is the accounts' (enterprise/logs is its only reader): a request of no known account is not kept, so
    // anonymous traffic can neither fill the buffer nor push an account's entries out of the table's row cap.
    if (e.account_id === null) return;
    if (this.buffer.length >= this.maxBuffered) {
      this.dropped++;
      return;
    }
    this.buffer.push(e);
    this.written.set(e.account_id, (this.written.get(e.account_id) ?? 0) + 1);
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** Writes what is buffered; answers when it (and any flush before it) is in the database. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.buffer;
    this.buffer = [];
    const dropped = this.dropped;
    this.dropped = 0;
    this.flushing = this.flushing.then(async () => {
      if (dropped) this.log.warn('request log entries dropped: the database did not keep up', { dropped });
      try {
        for (let i = 0; i < batch.length; i += 1000) await insertLogEntries(this.db, batch.slice(i, i + 1000));
      } catch (e) {
        this.log.warn('request log write failed', { entries: batch.length, error: (e as Error).message });
      }
    });
    return this.flushing;
  }

  /**
   * Retention: by age, then each account down to its share, then the whole table to its cap. An account is
   * cut once this instance wrote a hundredth of its share since the last cut (finding the cut reads up to its
   * share of the index), so it may go over by that much for a while, and a quiet account costs nothing.
   */
  async prune(now: Date): Promise<number> {
    const every = Math.max(1, Math.floor(this.maxRowsPerAccount / 100));
    let n = 0;
    for (const [account, count] of [...this.written]) {
      if (count < every) continue;
      this.written.delete(account);
      n += await pruneAccountLog(this.db, account, this.maxRowsPerAccount);
    }
    return n + (await pruneLog(this.db, new Date(now.getTime() - this.retentionDays * 86_400_000), this.maxRows));
  }
}
