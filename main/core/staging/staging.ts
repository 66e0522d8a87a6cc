import {
  STAGED_ERROR_MESSAGE_MAX,
  STAGED_LIFETIME_MS,
  agentPreview,
  type SettleOutcome,
  type StagedPayload,
  type StagedResponse,
  type StagedStatus,
} from '../../contract/staged.ts';
import type { User } from '../../contract/users.ts';
import type { Settings } from '../../contract/settings.ts';
import type { Principal } from '../../contract/principal.ts';
import { principalLabel } from '../../contract/principal-label.ts';
import type { AuditTrail } from '../ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { AppliedState, CallContext, WriteTool } from '../calls/tool.ts';
import type { Registry } from '../calls/registry.ts';
import type { EventHub } from '../events.ts';
import type { StagedStore } from './staged-store.ts';
import { type Actor, type AuditFacts, type Auditor, actorOf } from '../calls/auditor.ts';
import { StagingLedger } from './staging-ledger.ts';
import { settleUnknown } from './staging-settle.ts';
import { RECOVERY, deciderPrincipal, expiredError, newStagedItem, refOf, type Decider } from './staging-parts.ts';

export { canonicalJson, type Decider } from './staging-parts.ts';
import { checkAgentDecision } from '../identity/permissions.ts';
import { DEFAULT_STAGING_LIMITS, StagedIndex, jsonBytes, ownerKey, type StagingLimits } from './staged-index.ts';
import { codeOf, GatehouseError } from '../errors.ts';
import { capabilitiesOf } from '../identity/users.ts';
import { bindingOf, checkPresented, stalenessOf } from './approval-binding.ts';
import { BLOCK_MESSAGES, type Blocked, type Standing } from './staged-standing.ts';
import { A_PERSON, type ConfirmPolicy } from './staged-policy.ts';
import { callShapeOf } from '../policy/policy.ts';
import { maskSecretText } from '../../lib/secret-scan.ts';
import { USAGE_EVENTS, type UsageReporter } from '../calls/usage.ts';

export interface StagingDeps {
  store: StagedStore;
  users: (id: string) => User | undefined;
  registry: Registry;
  auditor: Auditor;
  events: EventHub;
  clock: Clock;
  /** where recovery looks for a `confirmed` entry written just before a crash */
  auditTrail: AuditTrail;
  /** read at decision time: an agent decides only in `agent` approval mode, only tools it may call now */
  settings: () => Settings;
  limits?: Partial<StagingLimits>;
  /** how long a write waits for a decision; shorter only in tests */
  lifetimeMs?: number;
  log?: Logger;
  /** a confirmed write is a usage event (once, live or in recovery) */
  usage: UsageReporter;
  /** whether the token that staged a write may still make it (staged-standing.ts); without it, every write stands */
  standing?: Standing;
  /** the tool-call policy asked again at a confirm (staged-policy.ts); without it, no policy is asked */
  confirmPolicy?: ConfirmPolicy;
}

/** What recovery did at start. */
export interface RecoveryReport {
  completed: number;
  pending_again: number;
  expired: number;
  interrupted: number;
}

/**
 * The staging state machine: pending -> applying -> confirmed | failed, and
 * pending -> discarded | expired. Nothing changes before a confirm. A confirm
 * records its intent (`applying`) before the plugin applies, so a crash in
 * between is completed or rolled back by `recover` at the next start (see
 * docs/staging.md); a confirm applies exactly once (a second one returns the
 * first result); each transition writes one audit entry, and a decision is
 * acknowledged only once that entry is durable.
 */
export class Staging {
  private readonly index: StagedIndex;
  private readonly ledger: StagingLedger;
  private readonly lifetimeMs: number;
  private readonly inFlight = new Map<string, Promise<StagedPayload>>();
  /** writes whose `confirmed` entry this process appended (it may still be queued for the disk) */
  private readonly confirmRecorded = new Set<string>();

  constructor(private readonly deps: StagingDeps) {
    this.index = new StagedIndex({ ...DEFAULT_STAGING_LIMITS, ...deps.limits });
    this.ledger = new StagingLedger(deps, this.index);
    this.lifetimeMs = Math.min(deps.lifetimeMs ?? STAGED_LIFETIME_MS, STAGED_LIFETIME_MS);
    for (const id of this.index.load(deps.store.loaded())) void this.ledger.forget(id);
  }

  /**
   * Takes over records from elsewhere (the options.json of an earlier
   * version): each one not known yet is stored and indexed. Run at start,
   * before recover(); running it again after a crash stores nothing twice.
   */
  async adopt(records: readonly StagedPayload[]): Promise<number> {
    const fresh = records.filter((r, i) => !this.index.get(r.id) && records.findIndex((x) => x.id === r.id) === i);
    for (const r of fresh) await this.deps.store.put(r);
    for (const id of this.index.load(fresh)) await this.ledger.forget(id);
    return fresh.length;
  }

  /** `audited`: what the call's audit says of it beside the staging (an upstream call's argument shape, its view) */
  async stage(
    tool: WriteTool,
    input: Record<string, unknown>,
    ctx: CallContext,
    audited: Pick<Partial<AuditFacts>, 'args_shape' | 'view'> = {},
  ): Promise<StagedResponse> {
    const started = this.deps.clock.now();
    // Before the preview, which may be costly (an AI call): a token at its limit gets its answer at once.
    this.index.assertRoom(ownerKey({ token_id: ctx.token?.id ?? null, user_id: ctx.user.id }), 0);
    const plan = await tool.preview(input, ctx);
    const now = this.deps.clock.now();
    const item: StagedPayload = {
      ...newStagedItem(tool, plan, ctx, now, this.lifetimeMs),
      call_shape: callShapeOf(input),
    };
    const writeBytes = jsonBytes({ payload: item.payload, preview: item.preview });
    if (writeBytes > this.index.limits.writeBytes) {
      throw new GatehouseError(
        'staged_too_large',
        `this write's payload and preview take ${Math.ceil(writeBytes / 1024)} KiB; the limit is ${Math.floor(this.index.limits.writeBytes / 1024)} KiB: split it into smaller writes`,
        { bytes: writeBytes, limit: this.index.limits.writeBytes },
      );
    }
    const bytes = jsonBytes(item);
    const owner = ownerKey(item);
    this.index.reserve(owner, bytes);
    try {
      await this.deps.store.put(item);
    } catch (e) {
      this.index.unreserve(owner, bytes);
      throw e;
    }
    this.index.commitReserved(item, bytes);
    this.ledger.audit(item, 'staged', actorOf(ctx), {
      ...audited,
      feature_key: tool.feature,
      duration_ms: this.deps.clock.now() - started,
    });
    this.deps.events.emit({ type: 'staged', item });
    return {
      status: 'pending_approval',
      staged_id: item.id,
      preview: agentPreview(item.preview),
      expires_at: item.expires_at,
    };
  }

  /** Open writes first (oldest first), then decided ones (newest first). */
  list(filter: { status?: StagedStatus; user_id?: string } = {}): StagedPayload[] {
    return this.index
      .list()
      .filter(
        (s) => (!filter.status || s.status === filter.status) && (!filter.user_id || s.user_id === filter.user_id),
      );
  }

  pendingCount(): number {
    return this.index.openCount;
  }

  get(id: string): StagedPayload {
    const found = this.index.get(id);
    if (!found) throw new GatehouseError('staged_not_found', `no staged write '${id}'`);
    if (found.status === 'pending' && this.ledger.isExpired(found)) return { ...found, status: 'expired' };
    return found;
  }

  async confirm(id: string, by: Decider): Promise<StagedPayload> {
    const running = this.inFlight.get(id);
    if (running) return running;
    const p = this.ledger.exclusive(id, () => this.doConfirm(id, by)).finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, p);
    return p;
  }

  async discard(id: string, by: Decider): Promise<StagedPayload> {
    return this.discardAs(id, by, true);
  }

  /**
   * The client that staged a write takes it back (MCP `tasks/cancel`): a
   * discard by the very token that staged it, in either approval mode, since
   * withdrawing one's own request approves nothing. Another token's write
   * answers as if it did not exist.
   */
  async withdraw(id: string, ctx: CallContext): Promise<StagedPayload> {
    const found = this.index.get(id);
    if (!found || !ctx.token || found.token_id !== ctx.token.id)
      throw new GatehouseError('staged_not_found', `no staged write '${id}'`);
    return this.discardAs(id, { kind: 'agent', ctx }, false);
  }

  private async discardAs(id: string, by: Decider, checkAgent: boolean): Promise<StagedPayload> {
    if (this.inFlight.has(id))
      throw new GatehouseError('staged_already_decided', `staged write '${id}' is being applied`);
    return this.ledger.exclusive(id, async () => {
      const item = await this.pendingOrThrow(id, by, 'discard', checkAgent);
      const started = this.deps.clock.now();
      const done = await this.ledger.finish(item, 'discarded', by);
      this.ledger.audit(item, 'discarded', this.actorFor(by, item), {
        duration_ms: this.deps.clock.now() - started,
        binding: bindingOf(item),
      });
      await this.deps.auditor.durable();
      return done;
    });
  }

  /** A person's word on a write whose outcome is unknown: applied or not; nothing is sent again (staging-settle.ts). */
  settle(id: string, outcome: SettleOutcome, by: Extract<Decider, { kind: 'person' }>): Promise<StagedPayload> {
    return this.ledger.exclusive(id, () =>
      settleUnknown({ ledger: this.ledger, auditor: this.deps.auditor, clock: this.deps.clock }, id, outcome, by),
    );
  }

  /** Moves expired pending writes to history with one `expired` audit entry each. */
  async sweep(): Promise<number> {
    let n = 0;
    for (const item of this.index.openItems()) {
      if (item.status !== 'pending' || !this.ledger.isExpired(item) || this.ledger.isBusy(item.id)) continue;
      await this.ledger.exclusive(item.id, async () => {
        const now = this.index.openItem(item.id);
        if (now?.status === 'pending' && this.ledger.isExpired(now)) {
          await this.ledger.expire(now);
          n++;
        }
      });
    }
    return n;
  }

  /**
   * At start, before anything else runs: every write whose confirm was in
   * flight when the service stopped is completed (its plugin says the apply
   * took effect: confirmed, with exactly one `confirmed` audit entry), rolled
   * back (it did not: pending again, or expired), or, when the plugin cannot
   * tell, marked failed with `apply_interrupted` and never applied again.
   */
  async recover(): Promise<RecoveryReport> {
    const report: RecoveryReport = { completed: 0, pending_again: 0, expired: 0, interrupted: 0 };
    for (const item of this.index.openItems()) {
      if (item.status !== 'applying') continue;
      let after: StagedPayload;
      try {
        after = await this.ledger.exclusive(item.id, () => this.resolveApplying(item));
      } catch (e) {
        // Left `applying`: the next confirm of it, or the next start, tries again.
        this.deps.log?.error('staging: could not recover a write that was being applied', {
          id: item.id,
          error: (e as Error).message,
        });
        continue;
      }
      if (after.status === 'confirmed') report.completed++;
      else if (after.status === 'pending') report.pending_again++;
      else if (after.status === 'expired') report.expired++;
      else report.interrupted++;
    }
    if (report.completed + report.pending_again + report.expired + report.interrupted > 0) {
      this.deps.log?.warn('staging: writes that were being applied when the service stopped were recovered', {
        ...report,
      });
    }
    await this.sweep();
    return report;
  }

  private async doConfirm(id: string, by: Decider): Promise<StagedPayload> {
    const settled = this.index.decided(id);
    if (settled?.status === 'confirmed') return settled;
    const open = this.index.openItem(id);
    // An earlier confirm in this process stopped after its intent (its audit entry or last write failed): finish that one first.
    if (open?.status === 'applying') {
      const after = await this.resolveApplying(open);
      if (after.status === 'confirmed') return after;
    }
    const item = await this.pendingOrThrow(id, by, 'confirm');
    const started = this.deps.clock.now();
    const tool = this.deps.registry.get(item.tool);
    const binding = bindingOf(item);
    if (by.kind === 'person') await this.refuseUnseen(item, by);
    // Every way a confirm can end records the transition once: history + one audit entry.
    const settleFailed = async (from: StagedPayload, code: string, message: string) => {
      await this.ledger.finish(from, 'failed', by, { error_code: code, error_message: failureText(message) });
      this.ledger.audit(item, 'error', this.actorFor(by, item), {
        error_code: code,
        duration_ms: this.deps.clock.now() - started,
        binding,
      });
      await this.deps.auditor.durable();
    };
    const refuse = async (
      code: 'stale_preview' | 'stale_approval' | 'forbidden' | 'not_found',
      message: string,
      details: Record<string, unknown> = {},
    ): Promise<never> => {
      await settleFailed(item, code, message);
      throw new GatehouseError(code, message, { staged_id: id, ...details });
    };
    const block = this.deps.standing?.(item);
    if (block === 'token_revoked') {
      await this.discardBlocked(item, block, by);
      throw new GatehouseError('token_revoked', BLOCK_MESSAGES.token_revoked, { staged_id: id });
    }
    if (block === 'token_narrowed') await this.refuseNow(item, by, 'token_narrowed', BLOCK_MESSAGES.token_narrowed);
    if (!tool || !tool.write)
      return refuse('not_found', `the tool '${item.tool}' that staged this write is no longer available`);
    // A policy that forbids the call now refuses the confirm; the write stays pending for a person to discard (or the policy to change).
    const denied = await this.deps.confirmPolicy?.(item, by);
    if (denied)
      await this.refuseNow(item, by, denied.code, denied.message, { policies: denied.policies }, denied.policies);
    const owner = this.deps.users(item.user_id);
    if (!owner || !capabilitiesOf(owner.role).has(tool.capability))
      return refuse('forbidden', 'the user who asked for this write no longer has the permission it needs');
    if (item.target && item.target_version !== null && tool.currentVersion) {
      const current = await tool.currentVersion(item.target);
      if (current !== item.target_version)
        return refuse(
          'stale_preview',
          `${item.target} changed since the preview was made (version ${item.target_version} -> ${current ?? 'deleted'}); ask the agent to stage it again`,
        );
    }
    const ctx: CallContext =
      by.kind === 'agent'
        ? by.ctx
        : {
            user: owner,
            capabilities: capabilitiesOf(owner.role),
            token: null,
            staged_by_token: item.token_id,
            request_id: by.request_id ?? item.request_id ?? id,
            client: item.client,
          };
    const stale = await stalenessOf(item, tool, ctx);
    if (stale)
      return refuse(stale.what === 'target' ? 'stale_preview' : 'stale_approval', stale.message, {
        changed: stale.what,
      });

    // The checks above took time: the decision is made now, and never after the expiry.
    if (this.ledger.isExpired(item)) {
      await this.ledger.expire(item);
      throw expiredError(item);
    }
    // The intent, durable before the plugin changes anything.
    const intent = await this.ledger.keepOpen({
      ...item,
      status: 'applying',
      decided_at: new Date(this.deps.clock.now()).toISOString(),
      decided_by: deciderPrincipal(by),
    });
    let result: unknown;
    let made: string | undefined;
    let versionAfter: (() => Promise<string | undefined>) | undefined;
    try {
      ({ structured: result, target: made, versionAfter } = await tool.apply(item.payload, ctx, refOf(intent)));
    } catch (e) {
      // apply changes all or nothing: it threw, so nothing was applied.
      await settleFailed(intent, codeOf(e), (e as Error).message ?? '');
      throw e;
    }
    const kept = result !== undefined ? await this.ledger.keepOpen({ ...intent, result }) : intent;
    const after = versionAfter ? await versionAfter().catch(() => undefined) : undefined;
    // A creation names its target only once applied: the confirm's entry records what was made.
    const policy = by.kind === 'agent' && by.policy ? { policy: by.policy } : {};
    return this.markConfirmed(kept, result, this.actorFor(by, item), {
      feature_key: tool.feature,
      duration_ms: this.deps.clock.now() - started,
      // what the write replaced (binding.target) and what it left (target_after): a later look can tell what changed
      binding: after ? { ...binding, target_after: after } : binding,
      ...(made && !item.target ? { target: made } : {}),
      ...policy,
    });
  }

  /**
   * The one place a write becomes `confirmed`, live or in recovery. Its audit
   * entry goes first and is made durable, then the record: a crash between
   * the two leaves `applying`, and recovery then finds the entry instead of
   * writing a second one.
   */
  private async markConfirmed(
    intent: StagedPayload,
    result: unknown,
    actor: Actor,
    facts: Partial<AuditFacts>,
  ): Promise<StagedPayload> {
    // The result is kept with the intent before its entry: a crash after either leaves a write recovery confirms
    // with that result, once, whether its plugin can tell (built-ins) or not (an upstream, which cannot be asked).
    if (result !== undefined && intent.result === undefined) intent = await this.ledger.keepOpen({ ...intent, result });
    if (!this.confirmRecorded.has(intent.id)) {
      this.ledger.audit(intent, 'confirmed', actor, facts);
      this.confirmRecorded.add(intent.id);
    }
    try {
      await this.deps.auditor.durable();
    } catch (e) {
      throw new GatehouseError(
        codeOf(e) === 'storage_unavailable' ? 'storage_unavailable' : 'service_unavailable',
        `the write was applied, but its audit entry could not be saved (${(e as Error).message}); it is retried, and confirming again completes the decision`,
        { staged_id: intent.id },
      );
    }
    const done = await this.ledger.finish(intent, 'confirmed', undefined, { result });
    this.confirmRecorded.delete(intent.id);
    // Reported, but no second action: the write's one mcp_action is its tool call (docs/staging.md, "Usage and quotas").
    this.deps.usage.record({
      event: USAGE_EVENTS.writeConfirmed,
      product: 'mcp',
      feature: facts.feature_key ?? 'mcp.staging',
      units: 0,
    });
    return done;
  }

  /** An `applying` write whose confirm is not running (any more): ask its plugin whether the apply took effect. */
  private async resolveApplying(item: StagedPayload): Promise<StagedPayload> {
    const tool = this.deps.registry.get(item.tool);
    const ref = refOf(item);
    // The intent recorded who decided: the completed confirm is still theirs.
    const decider = item.decided_by;
    const actor: Actor =
      decider?.kind === 'token'
        ? { principal: decider, user_id: item.user_id, client: item.client, request_id: item.request_id }
        : { principal: decider, user_id: item.user_id, request_id: null };
    const entered =
      this.confirmRecorded.has(item.id) || (await this.deps.auditTrail.hasStagedEntry(item.id, 'confirmed', ref.since));
    if (entered) this.confirmRecorded.add(item.id);
    const facts = { feature_key: tool?.feature ?? null };
    // The durable record first, for every plugin: a result kept with the intent, or a `confirmed` entry, means the
    // apply returned. It is confirmed with that result, once (the entry is never written twice); with only the entry,
    // with what the plugin can tell of it (an upstream cannot: no result).
    if (item.result !== undefined) return this.markConfirmed(item, item.result, actor, facts);
    const answer: AppliedState = tool?.write && tool.applied ? await tool.applied(ref) : { state: 'unknown' };
    if (answer.state === 'applied') return this.markConfirmed(item, answer.output.structured, actor, facts);
    if (entered) return this.markConfirmed(item, undefined, actor, facts);
    if (answer.state === 'not_applied') {
      const back = { ...item, status: 'pending' as const, decided_at: null, decided_by: null };
      if (this.ledger.isExpired(back)) {
        await this.ledger.expire(back);
        return { ...back, status: 'expired' };
      }
      return this.ledger.keepOpen(back);
    }
    // An upstream write sent before the stop cannot be asked: outcome_unknown, for a person to check.
    const code = answer.state === 'unknown' && answer.code ? answer.code : 'apply_interrupted';
    const done = await this.ledger.finish(item, 'failed', RECOVERY, { error_code: code });
    this.ledger.audit(
      item,
      'error',
      {
        principal: RECOVERY,
        user_id: item.user_id,
        client: actor.client ?? principalLabel(decider),
        request_id: actor.request_id ?? null,
      },
      { error_code: code },
    );
    await this.deps.auditor.durable();
    return done;
  }

  /** Why a pending write may not be approved now (its token revoked or narrowed), or null. */
  blockOf(item: StagedPayload): ReturnType<Standing> {
    return this.deps.standing?.(item) ?? null;
  }

  /** What the desk shows of a pending write that may not be approved now: its token's standing, then the policy a person's confirm would ask (staged-policy.ts). */
  async blockNow(item: StagedPayload): Promise<Blocked | null> {
    if (item.status !== 'pending') return null;
    const block = this.blockOf(item);
    if (block) return { block, reason: BLOCK_MESSAGES[block] };
    const denied = await this.deps.confirmPolicy?.(item, A_PERSON);
    return denied?.code === 'policy_denied' ? { block: 'policy_denied', reason: denied.message } : null;
  }

  /**
   * Discards every pending write whose token was revoked, with `token_revoked`
   * as its error code and one `discarded` audit entry each, decided by `by`
   * (the person who revoked, or the service at start when a crash cut a
   * revocation short). A narrowed token's writes stay: a narrowing may be
   * undone, and a person may still discard them. Returns how many.
   */
  async discardRevoked(by: Decider | Principal): Promise<number> {
    let n = 0;
    for (const open of this.index.openItems()) {
      if (open.status !== 'pending' || this.blockOf(open) !== 'token_revoked') continue;
      n += await this.ledger.exclusive(open.id, async () => {
        const item = this.index.openItem(open.id);
        if (item?.status !== 'pending' || this.blockOf(item) !== 'token_revoked') return 0;
        await this.discardBlocked(item, 'token_revoked', by);
        return 1;
      });
    }
    return n;
  }

  /**
   * Discards every pending write of a plugin, with `code` as its error code and one `discarded` audit entry
   * each: an upstream being removed (a program re-added later under the same id is another program, and
   * an identical definition would not make the write stale). Returns how many.
   */
  async discardOfPlugin(plugin: string, code: 'upstream_removed', by: Decider): Promise<number> {
    let n = 0;
    for (const open of this.index.openItems()) {
      if (open.status !== 'pending' || open.plugin !== plugin || this.inFlight.has(open.id)) continue;
      n += await this.ledger.exclusive(open.id, async () => {
        const item = this.index.openItem(open.id);
        if (item?.status !== 'pending' || item.plugin !== plugin) return 0;
        await this.ledger.finish(item, 'discarded', by, { error_code: code });
        this.ledger.audit(item, 'discarded', this.actorFor(by, item), { error_code: code, binding: bindingOf(item) });
        await this.deps.auditor.durable();
        return 1;
      });
    }
    return n;
  }

  private async discardBlocked(
    item: StagedPayload,
    block: NonNullable<ReturnType<Standing>>,
    by: Decider | Principal,
  ): Promise<void> {
    await this.ledger.finish(item, 'discarded', by, { error_code: block });
    const actor: Actor =
      'ctx' in by || 'principal' in by
        ? this.actorFor(by, item)
        : { principal: by, user_id: item.user_id, request_id: null };
    this.ledger.audit(item, 'discarded', actor, { error_code: block, binding: bindingOf(item) });
    await this.deps.auditor.durable();
  }

  /** A person's approve request names the preview they saw: another one is refused and the write stays pending. */
  private async refuseUnseen(item: StagedPayload, by: Extract<Decider, { kind: 'person' }>): Promise<void> {
    try {
      checkPresented(item, by.preview_hash);
    } catch (e) {
      await this.refuseNow(item, by, 'stale_approval', (e as Error).message, { changed: 'preview' });
    }
  }

  /** Refuses a confirm without deciding the write: one `denied` audit entry (with the binding), and it stays pending. */
  private async refuseNow(
    item: StagedPayload,
    by: Decider,
    code: 'stale_approval' | 'token_narrowed' | 'policy_denied' | 'policy_unavailable',
    message: string,
    details: Record<string, unknown> = {},
    policy?: string[],
  ): Promise<never> {
    this.ledger.audit(item, 'denied', this.actorFor(by, item), {
      error_code: code,
      binding: bindingOf(item),
      ...(policy ? { policy } : {}),
    });
    await this.deps.auditor.durable();
    throw new GatehouseError(code, message, { staged_id: item.id, ...details });
  }

  private async pendingOrThrow(
    id: string,
    by: Decider,
    verb: 'confirm' | 'discard',
    checkAgent = true,
  ): Promise<StagedPayload> {
    const item = this.index.openItem(id);
    if (!item || item.status !== 'pending') {
      const past = this.index.decided(id);
      if (past?.status === 'expired') throw expiredError(past);
      if (past) throw new GatehouseError('staged_already_decided', `staged write '${id}' was already ${past.status}`);
      if (item) throw new GatehouseError('staged_already_decided', `staged write '${id}' is being applied`);
      throw new GatehouseError('staged_not_found', `no staged write '${id}'`);
    }
    // A write the policy lets run without a person is confirmed in the call that staged it, not by the agent's own decision.
    if (by.kind === 'agent' && checkAgent && !by.policy)
      checkAgentDecision(item, by.ctx, this.deps.settings(), this.deps.registry, verb);
    if (this.ledger.isExpired(item)) {
      await this.ledger.expire(item);
      throw expiredError(item);
    }
    return item;
  }

  private actorFor(by: Decider, item: StagedPayload): Actor {
    if (by.kind === 'agent') return actorOf(by.ctx);
    // The entry is about the write: user_id stays its owner's; the principal says which person decided.
    return { principal: by.principal, user_id: item.user_id, request_id: by.request_id ?? null };
  }
}

/** A failure's words as a failed write keeps them: masked (an upstream may echo what it was given), one bounded text. */
function failureText(message: string): string | null {
  const t = maskSecretText(message).trim();
  return t ? (t.length > STAGED_ERROR_MESSAGE_MAX ? `${t.slice(0, STAGED_ERROR_MESSAGE_MAX - 1)}…` : t) : null;
}
