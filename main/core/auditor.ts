import type { AuditEntry, AuditResult, ClientSource } from '../contract/audit.ts';
import type { AuditSink, Clock } from './ports.ts';
import type { StatsRecorder } from './stats.ts';
import type { CallContext } from './tool.ts';
import { uuidv7 } from './ids.ts';

export interface AuditFacts {
  tool: string;
  write: boolean;
  result: AuditResult;
  error_code?: string | null;
  source_plugin?: string | null;
  feature_key?: string | null;
  target?: string | null;
  duration_ms?: number;
  staged_id?: string | null;
}

/** Who acted, when there is no call context (a person confirming in the console). */
export interface Actor {
  request_id?: string | null;
  token_id?: string | null;
  token_preview?: string | null;
  user_id?: string | null;
  client?: string | null;
  client_source?: ClientSource | null;
}

export const actorOf = (ctx: CallContext): Actor => ({
  request_id: ctx.request_id,
  token_id: ctx.token?.id ?? null,
  token_preview: ctx.token?.preview ?? null,
  user_id: ctx.user.id,
  client: ctx.client,
  client_source: ctx.client_source ?? null,
});

/** Writes one audit entry per outcome and counts it in the stats. */
export class Auditor {
  constructor(
    private readonly sink: AuditSink,
    private readonly stats: StatsRecorder,
    private readonly clock: Clock,
    private readonly site: () => string | null,
  ) {}

  record(facts: AuditFacts, actor: Actor): AuditEntry {
    const now = this.clock.now();
    const entry: AuditEntry = {
      id: uuidv7(now),
      at: new Date(now).toISOString(),
      request_id: actor.request_id ?? null,
      tool: facts.tool,
      write: facts.write,
      result: facts.result,
      error_code: facts.error_code ?? null,
      source_plugin: facts.source_plugin ?? null,
      feature_key: facts.feature_key ?? null,
      site: this.site(),
      token_id: actor.token_id ?? null,
      token_preview: actor.token_preview ?? null,
      user_id: actor.user_id ?? null,
      target: facts.target ?? null,
      duration_ms: Math.max(0, Math.round((facts.duration_ms ?? 0) * 100) / 100),
      client: actor.client ?? null,
      ...(actor.client_source ? { client_source: actor.client_source } : {}),
      staged_id: facts.staged_id ?? null,
    };
    this.sink.append(entry);
    this.stats.count(entry.tool, entry.result);
    return entry;
  }

  /** Waits until every entry recorded so far is durable; a decision is acknowledged only after this. */
  durable(): Promise<void> {
    return this.sink.sync();
  }
}
