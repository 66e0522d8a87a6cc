import type { StagedPayload, StagedStatus } from '../../contract/staged.ts';
import type { AuditResult } from '../../contract/audit.ts';
import { PRINCIPALS, type Principal } from '../../contract/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Actor, AuditFacts, Auditor } from '../calls/auditor.ts';
import type { EventHub } from '../events.ts';
import type { StagedStore } from './staged-store.ts';
import { jsonBytes, type StagedIndex } from './staged-index.ts';
import { deciderPrincipal, type Decider } from './staging-parts.ts';

export interface LedgerDeps {
  store: StagedStore;
  auditor: Auditor;
  events: EventHub;
  clock: Clock;
  log?: Logger | undefined;
}

/**
 * How a staged write's transitions are kept: the record in the store, the
 * index, the live event and the audit entry, one write at a time. The state
 * machine (staging.ts) decides which transition; this records it.
 */
export class StagingLedger {
  /** per write: the transition running on it; transitions of one write never overlap */
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(
    private readonly deps: LedgerDeps,
    readonly index: StagedIndex,
  ) {}

  /** Whether a transition is queued or running on this write. */
  isBusy(id: string): boolean {
    return this.busy.has(id);
  }

  async expire(item: StagedPayload): Promise<void> {
    await this.finish(item, 'expired', PRINCIPALS.stagedExpiry);
    this.audit(item, 'expired', {
      principal: PRINCIPALS.stagedExpiry,
      user_id: item.user_id,
      client: item.client,
      request_id: item.request_id,
    });
  }

  /** One audit entry for a transition of a staged write. */
  audit(item: StagedPayload, result: AuditResult, actor: Actor, extra: Partial<AuditFacts> = {}): void {
    this.deps.auditor.record(
      {
        tool: item.tool,
        write: true,
        result,
        source_plugin: item.plugin,
        target: item.target,
        staged_id: item.id,
        ...extra,
      },
      actor,
    );
  }

  /** Stores a write that stays open (pending <-> applying). */
  async keepOpen(item: StagedPayload): Promise<StagedPayload> {
    await this.deps.store.put(item);
    this.index.replaceOpen(item, jsonBytes(item));
    this.deps.events.emit({ type: 'staged', item });
    return item;
  }

  /** Stores a decision; `by` undefined keeps the decider the intent recorded. */
  async finish(
    item: StagedPayload,
    status: StagedStatus,
    by: Decider | Principal | undefined,
    extra: Partial<StagedPayload> = {},
  ): Promise<StagedPayload> {
    const done: StagedPayload = {
      ...item,
      ...extra,
      status,
      decided_at: by === undefined && item.decided_at ? item.decided_at : new Date(this.deps.clock.now()).toISOString(),
      decided_by: by === undefined ? item.decided_by : deciderPrincipal(by),
    };
    await this.deps.store.put(done);
    for (const id of this.index.settle(done, jsonBytes(done))) await this.forget(id);
    this.deps.events.emit({ type: 'staged', item: done });
    return done;
  }

  /** Deletes a decision pruned from the history; one left behind by a crash is pruned again at the next start. */
  async forget(id: string): Promise<void> {
    await this.deps.store
      .remove(id)
      .catch((e: unknown) =>
        this.deps.log?.warn('staging: could not delete an old decision', { id, error: (e as Error).message }),
      );
  }

  /** Runs `fn` after every transition already queued for the same write. */
  exclusive<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const before = this.busy.get(id) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.busy.set(id, tail);
    void tail.then(() => {
      if (this.busy.get(id) === tail) this.busy.delete(id);
    });
    return run;
  }

  isExpired(item: StagedPayload): boolean {
    return Date.parse(item.expires_at) <= this.deps.clock.now();
  }
}
