import { STAGED_LIMITS, type StagedPayload } from '../../contract/staged.ts';
import { GatehouseError } from '../errors.ts';

export interface StagingLimits {
  writeBytes: number;
  pendingPerToken: number;
  pendingTotal: number;
  pendingBytes: number;
  historyEntries: number;
  historyBytes: number;
}
export const DEFAULT_STAGING_LIMITS: StagingLimits = { ...STAGED_LIMITS };

interface Entry {
  item: StagedPayload;
  bytes: number;
}

/**
 * UTF-8 size of a value as JSON: what a record costs on disk and, roughly, in memory. Counted without encoding it:
 * a 40 KB write's encoded copy took 40% of the time (every pending write is measured at each open).
 */
export const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

/** Pending writes are counted per token; a write staged without one (in-process callers) counts for its user. */
export const ownerKey = (item: Pick<StagedPayload, 'token_id' | 'user_id'>): string =>
  item.token_id ?? `user:${item.user_id}`;

/**
 * The in-memory view of every staged write: the open ones (pending or
 * applying, oldest first) and the decided ones (oldest decision first), with
 * the counters the limits need. Every operation is O(1) in the number of
 * writes, except `list`. Pure bookkeeping: Staging persists before it calls
 * anything here, so the index only ever shows what is on disk.
 */
export class StagedIndex {
  private readonly open = new Map<string, Entry>();
  private readonly history = new Map<string, Entry>();
  private readonly perOwner = new Map<string, number>();
  private openBytes = 0;
  /** writes being stored right now: counted against the limits already */
  private reserved = 0;
  private reservedBytes = 0;
  private decidedBytes = 0;

  constructor(readonly limits: StagingLimits) {}

  /** Fills the index from the store at start; returns the ids of decided records beyond the history limits (to delete). */
  load(records: readonly StagedPayload[]): string[] {
    const open = records
      .filter((r) => r.status === 'pending' || r.status === 'applying')
      .sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id));
    const decided = records
      .filter((r) => r.status !== 'pending' && r.status !== 'applying')
      .sort(
        (a, b) =>
          (a.decided_at ?? a.created).localeCompare(b.decided_at ?? b.created) ||
          a.created.localeCompare(b.created) ||
          a.id.localeCompare(b.id),
      );
    for (const item of open) this.addOpen(item, jsonBytes(item));
    const pruned: string[] = [];
    for (const item of decided) pruned.push(...this.addDecided(item, jsonBytes(item)));
    return pruned;
  }

  get(id: string): StagedPayload | undefined {
    return (this.open.get(id) ?? this.history.get(id))?.item;
  }

  openItem(id: string): StagedPayload | undefined {
    return this.open.get(id)?.item;
  }

  decided(id: string): StagedPayload | undefined {
    return this.history.get(id)?.item;
  }

  openItems(): StagedPayload[] {
    return [...this.open.values()].map((e) => e.item);
  }

  /** Open writes oldest first, then decisions newest first. */
  list(): StagedPayload[] {
    const decided = [...this.history.values()].map((e) => e.item).reverse();
    return [...this.openItems(), ...decided];
  }

  get openCount(): number {
    return this.open.size;
  }

  /**
   * Holds room for a new write before it is written, so concurrent stages
   * cannot overshoot a limit between the check and the write. Throws
   * staged_limit_reached naming the limit that was hit.
   */
  reserve(owner: string, bytes: number): void {
    this.assertRoom(owner, bytes);
    this.perOwner.set(owner, (this.perOwner.get(owner) ?? 0) + 1);
    this.reserved++;
    this.reservedBytes += bytes;
  }

  /** Throws staged_limit_reached when a write of `bytes` for `owner` would not fit now. */
  assertRoom(owner: string, bytes: number): void {
    const L = this.limits;
    const mine = this.perOwner.get(owner) ?? 0;
    const pendingTotal = this.open.size + this.reserved;
    if (mine >= L.pendingPerToken) {
      throw new GatehouseError(
        'staged_limit_reached',
        `this token already has ${mine} staged writes waiting for a decision (the limit is ${L.pendingPerToken}); ask a person to confirm or discard some first`,
        { scope: 'token', limit: L.pendingPerToken },
      );
    }
    if (pendingTotal >= L.pendingTotal) {
      throw new GatehouseError(
        'staged_limit_reached',
        `${pendingTotal} staged writes are waiting for a decision (the limit is ${L.pendingTotal}); ask a person to confirm or discard some first`,
        { scope: 'total', limit: L.pendingTotal },
      );
    }
    if (this.openBytes + this.reservedBytes + bytes > L.pendingBytes) {
      throw new GatehouseError(
        'staged_limit_reached',
        `the staged writes waiting for a decision already take ${Math.round((this.openBytes + this.reservedBytes) / 1024 / 1024)} MiB (the limit is ${Math.round(L.pendingBytes / 1024 / 1024)} MiB); ask a person to decide some first`,
        { scope: 'bytes', limit: L.pendingBytes },
      );
    }
  }

  /** Gives a reservation back (the write was not stored) or turns it into an open entry. */
  unreserve(owner: string, bytes: number): void {
    this.dropOwner(owner);
    this.reserved--;
    this.reservedBytes -= bytes;
  }

  /** A reserved write was stored: it becomes open. */
  commitReserved(item: StagedPayload, bytes: number): void {
    this.reserved--;
    this.reservedBytes -= bytes;
    this.open.set(item.id, { item, bytes });
    this.openBytes += bytes;
  }

  /** An open write changed state but stays open (pending <-> applying). */
  replaceOpen(item: StagedPayload, bytes: number): void {
    const old = this.open.get(item.id);
    if (!old) throw new GatehouseError('internal_error', `staging: '${item.id}' is not open`);
    this.openBytes += bytes - old.bytes;
    this.open.set(item.id, { item, bytes });
  }

  /** An open write was decided: it leaves the counts and joins the history. Returns ids pruned from the history. */
  settle(item: StagedPayload, bytes: number): string[] {
    const old = this.open.get(item.id);
    if (old) {
      this.open.delete(item.id);
      this.openBytes -= old.bytes;
      this.dropOwner(ownerKey(old.item));
    }
    return this.addDecided(item, bytes);
  }

  private addOpen(item: StagedPayload, bytes: number): void {
    this.open.set(item.id, { item, bytes });
    this.openBytes += bytes;
    const owner = ownerKey(item);
    this.perOwner.set(owner, (this.perOwner.get(owner) ?? 0) + 1);
  }

  private addDecided(item: StagedPayload, bytes: number): string[] {
    const old = this.history.get(item.id);
    if (old) this.decidedBytes -= old.bytes;
    this.history.delete(item.id);
    this.history.set(item.id, { item, bytes });
    this.decidedBytes += bytes;
    const pruned: string[] = [];
    // Oldest decisions go first; the newest one always stays.
    while (
      this.history.size > 1 &&
      (this.history.size > this.limits.historyEntries || this.decidedBytes > this.limits.historyBytes)
    ) {
      const [oldestId, oldest] = this.history.entries().next().value as [string, Entry];
      this.history.delete(oldestId);
      this.decidedBytes -= oldest.bytes;
      pruned.push(oldestId);
    }
    return pruned;
  }

  private dropOwner(owner: string): void {
    const n = (this.perOwner.get(owner) ?? 0) - 1;
    if (n > 0) this.perOwner.set(owner, n);
    else this.perOwner.delete(owner);
  }
}
