import type { StagedPayload } from '../../contract/staged.ts';

/**
 * Where staged writes are kept: one record per id, each `put` durable before
 * it resolves, and its cost independent of how many other records exist (the
 * file adapter writes one small file per write). Staging keeps the index in
 * memory; the store only holds what must survive a restart.
 */
export interface StagedStore {
  /** Every record the store held when it was opened, in no particular order; an adapter may hand them over only once. */
  loaded(): readonly StagedPayload[];
  /** Creates or replaces the record with `item.id`. */
  put(item: StagedPayload): Promise<void>;
  /** Forgets a record (history pruning); a missing one is not an error. */
  remove(id: string): Promise<void>;
}

/** A StagedStore in memory, for pure-core tests: a new Staging over the same instance is a restart. */
export class MemoryStagedStore implements StagedStore {
  readonly records = new Map<string, StagedPayload>();
  /** set to make the next put fail, once */
  failNextPut: Error | null = null;
  /** puts that still succeed before `failNextPut` applies (a kill at a later step of a transition) */
  passPuts = 0;

  constructor(initial: readonly StagedPayload[] = []) {
    for (const r of initial) this.records.set(r.id, structuredClone(r));
  }

  loaded(): readonly StagedPayload[] {
    return [...this.records.values()].map((r) => structuredClone(r));
  }

  async put(item: StagedPayload): Promise<void> {
    await Promise.resolve();
    const fail = this.failNextPut;
    if (fail && this.passPuts > 0) this.passPuts--;
    else if (fail) {
      this.failNextPut = null;
      throw fail;
    }
    this.records.set(item.id, structuredClone(item));
  }

  async remove(id: string): Promise<void> {
    await Promise.resolve();
    this.records.delete(id);
  }
}
