import { createHash } from 'node:crypto';
import { STAGED_LIFETIME_MS, type StagedPayload, type StagedResponse, type StagedStatus } from '../contract/staged.ts';
import type { DocumentStore, Clock } from './ports.ts';
import type { OptionsData } from './options-data.ts';
import type { CallContext, WriteTool } from './tool.ts';
import type { Registry } from './registry.ts';
import type { EventHub } from './events.ts';
import type { AuditResult } from '../contract/audit.ts';
import { type Actor, type AuditFacts, type Auditor, actorOf } from './auditor.ts';
import { Transients } from './transients.ts';
import { GatehouseError } from './errors.ts';
import { capabilitiesOf } from './users.ts';
import { shortId } from './ids.ts';
import { USAGE_EVENTS, type UsageReporter } from './usage.ts';

const KEY = 'staged:';
const HISTORY_CAP = 500;

/** Canonical JSON (sorted keys), so the hash does not depend on key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
const hashPayload = (p: unknown): string => createHash('sha256').update(canonicalJson(p)).digest('hex');

/** Who decides: a person (console, tray, CLI) or, in `agent` mode, the token's own user. */
export type Decider = { kind: 'person'; login: string; actor?: Actor } | { kind: 'agent'; ctx: CallContext };

/**
 * The staging state machine: pending -> confirmed | discarded | expired | failed.
 * Nothing changes before a confirm; a confirm applies exactly once (a second
 * one returns the first result); each transition writes one audit entry.
 */
export class Staging {
  private readonly transients: Transients;
  private readonly inFlight = new Map<string, Promise<StagedPayload>>();

  constructor(
    private readonly store: DocumentStore<OptionsData>,
    private readonly registry: Registry,
    private readonly auditor: Auditor,
    private readonly events: EventHub,
    private readonly clock: Clock,
    private readonly usage: UsageReporter,
  ) {
    this.transients = new Transients(store, clock);
  }

  async stage(tool: WriteTool, input: Record<string, unknown>, ctx: CallContext): Promise<StagedResponse> {
    const started = this.clock.now();
    const plan = await tool.preview(input, ctx);
    const now = this.clock.now();
    const item: StagedPayload = {
      id: shortId('stg'),
      tool: tool.name,
      plugin: tool.plugin,
      payload: plan.payload,
      preview: plan.preview,
      user_id: ctx.user.id,
      token_id: ctx.token?.id ?? null,
      token_label: ctx.token?.label ?? null,
      client: ctx.client,
      request_id: ctx.request_id,
      created: new Date(now).toISOString(),
      expires_at: new Date(now + STAGED_LIFETIME_MS).toISOString(),
      payload_hash: hashPayload(plan.payload),
      target: plan.target,
      target_version: plan.target_version,
      status: 'pending',
      decided_at: null,
      decided_by: null,
      error_code: null,
    };
    await this.transients.set(KEY + item.id, item, STAGED_LIFETIME_MS);
    this.audit(item, 'staged', actorOf(ctx), { feature_key: tool.feature, duration_ms: this.clock.now() - started });
    this.events.emit({ type: 'staged', item });
    return { status: 'pending_approval', staged_id: item.id, preview: item.preview, expires_at: item.expires_at };
  }

  /** Pending ones first (oldest first), then decided ones (newest first). */
  list(filter: { status?: StagedStatus; user_id?: string } = {}): StagedPayload[] {
    const pending = this.pendingItems().sort((a, b) => a.created.localeCompare(b.created));
    const history = [...this.store.read().staged_history].reverse();
    return [...pending, ...history].filter((s) => (!filter.status || s.status === filter.status) && (!filter.user_id || s.user_id === filter.user_id));
  }

  pendingCount(): number {
    return this.pendingItems().length;
  }

  get(id: string): StagedPayload {
    const found = this.raw(id) ?? this.store.read().staged_history.find((s) => s.id === id);
    if (!found) throw new GatehouseError('staged_not_found', `no staged write '${id}'`);
    if (found.status === 'pending' && this.isExpired(found)) return { ...found, status: 'expired' };
    return found;
  }

  async confirm(id: string, by: Decider): Promise<StagedPayload> {
    const running = this.inFlight.get(id);
    if (running) return running;
    const p = this.doConfirm(id, by).finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, p);
    return p;
  }

  async discard(id: string, by: Decider): Promise<StagedPayload> {
    if (this.inFlight.has(id)) throw new GatehouseError('staged_already_decided', `staged write '${id}' is being applied`);
    const item = await this.pendingOrThrow(id, by);
    const started = this.clock.now();
    const done = await this.finish(item, 'discarded', by);
    this.audit(item, 'discarded', this.actorFor(by, item), { duration_ms: this.clock.now() - started });
    return done;
  }

  /** Moves expired pending writes to history with one `expired` audit entry each. */
  async sweep(): Promise<number> {
    const expired: StagedPayload[] = [];
    await this.transients.sweep((key, value) => {
      if (key.startsWith(KEY)) expired.push(value as StagedPayload);
    });
    for (const item of expired) await this.expire(item);
    return expired.length;
  }

  private async doConfirm(id: string, by: Decider): Promise<StagedPayload> {
    const settled = this.store.read().staged_history.find((s) => s.id === id);
    if (settled?.status === 'confirmed') return settled;
    const item = await this.pendingOrThrow(id, by);
    const started = this.clock.now();
    const tool = this.registry.get(item.tool);
    // Every way a confirm can end records the transition once: history + one audit entry.
    const settleFailed = async (code: string) => {
      await this.finish(item, 'failed', by, { error_code: code });
      this.audit(item, 'error', this.actorFor(by, item), { error_code: code, duration_ms: this.clock.now() - started });
    };
    const refuse = async (code: 'stale_preview' | 'forbidden' | 'not_found' | 'conflict', message: string): Promise<never> => {
      await settleFailed(code);
      throw new GatehouseError(code, message, { staged_id: id });
    };
    if (!tool || !tool.write) return refuse('not_found', `the tool '${item.tool}' that staged this write is no longer available`);
    if (hashPayload(item.payload) !== item.payload_hash) return refuse('conflict', 'the staged payload does not match its hash; it was not applied');
    const owner = this.store.read().users.find((u) => u.id === item.user_id);
    if (!owner || !capabilitiesOf(owner.role).has(tool.capability)) return refuse('forbidden', 'the user who asked for this write no longer has the permission it needs');
    if (item.target && item.target_version !== null && tool.currentVersion) {
      const current = await tool.currentVersion(item.target);
      if (current !== item.target_version) return refuse('stale_preview', `${item.target} changed since the preview was made (version ${item.target_version} -> ${current ?? 'deleted'}); ask the agent to stage it again`);
    }
    const ctx: CallContext = by.kind === 'agent' ? by.ctx : { user: owner, capabilities: capabilitiesOf(owner.role), token: null, request_id: by.actor?.request_id ?? item.request_id ?? id, client: item.client };
    let result: unknown;
    try {
      result = (await tool.apply(item.payload, ctx)).structured;
    } catch (e) {
      await settleFailed(e instanceof GatehouseError ? e.code : 'internal_error');
      throw e;
    }
    const done = await this.finish(item, 'confirmed', by, { result });
    this.audit(item, 'confirmed', this.actorFor(by, item), { feature_key: tool.feature, duration_ms: this.clock.now() - started });
    this.usage.record({ event: USAGE_EVENTS.writeConfirmed, product: 'mcp', feature: tool.feature, units: 1 });
    return done;
  }

  private async pendingOrThrow(id: string, by: Decider): Promise<StagedPayload> {
    const item = this.raw(id);
    if (!item) {
      const past = this.store.read().staged_history.find((s) => s.id === id);
      if (past?.status === 'expired') throw new GatehouseError('staged_expired', `staged write '${id}' expired at ${past.expires_at}; ask the agent to stage it again`);
      if (past) throw new GatehouseError('staged_already_decided', `staged write '${id}' was already ${past.status}`);
      throw new GatehouseError('staged_not_found', `no staged write '${id}'`);
    }
    if (by.kind === 'agent' && item.user_id !== by.ctx.user.id) throw new GatehouseError('staged_not_found', `no staged write '${id}'`);
    if (this.isExpired(item)) {
      await this.expire(item);
      throw new GatehouseError('staged_expired', `staged write '${id}' expired at ${item.expires_at}; ask the agent to stage it again`);
    }
    return item;
  }

  private async expire(item: StagedPayload): Promise<void> {
    await this.finish(item, 'expired', null);
    this.audit(item, 'expired', { user_id: item.user_id, token_id: item.token_id, client: item.client, request_id: item.request_id });
  }

  /** One audit entry for a transition of a staged write. */
  private audit(item: StagedPayload, result: AuditResult, actor: Actor, extra: Partial<AuditFacts> = {}): void {
    this.auditor.record({ tool: item.tool, write: true, result, source_plugin: item.plugin, target: item.target, staged_id: item.id, ...extra }, actor);
  }

  private async finish(item: StagedPayload, status: StagedStatus, by: Decider | null, extra: Partial<StagedPayload> = {}): Promise<StagedPayload> {
    const done: StagedPayload = {
      ...item,
      ...extra,
      status,
      decided_at: new Date(this.clock.now()).toISOString(),
      decided_by: by ? (by.kind === 'person' ? by.login : `agent:${by.ctx.user.login}`) : null,
    };
    await this.store.update((d) => {
      delete d.transients[KEY + item.id];
      if (d.staged_history.some((s) => s.id === item.id)) return;
      d.staged_history.push(done);
      if (d.staged_history.length > HISTORY_CAP) d.staged_history.splice(0, d.staged_history.length - HISTORY_CAP);
    });
    this.events.emit({ type: 'staged', item: done });
    return done;
  }

  private actorFor(by: Decider, item: StagedPayload): Actor {
    if (by.kind === 'agent') return actorOf(by.ctx);
    return { request_id: by.actor?.request_id ?? null, token_id: by.actor?.token_id ?? null, token_preview: by.actor?.token_preview ?? null, user_id: by.actor?.user_id ?? item.user_id, client: by.actor?.client ?? `person:${by.login}` };
  }

  private raw(id: string): StagedPayload | undefined {
    return this.store.read().transients[KEY + id]?.value as StagedPayload | undefined;
  }

  private pendingItems(): StagedPayload[] {
    return this.transients.list<StagedPayload>(KEY).map((t) => t.value);
  }

  private isExpired(item: StagedPayload): boolean {
    return Date.parse(item.expires_at) <= this.clock.now();
  }
}
