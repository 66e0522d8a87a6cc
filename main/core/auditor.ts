import type { AuditEntry, AuditResult, ClientSource } from '../contract/audit.ts';
import { tokenPrincipal, type Principal } from '../contract/principal.ts';
import type { AuditSink } from './ports.ts';
import type { Clock } from '../lib/clock.ts';
import type { StatsRecorder } from './stats.ts';
import type { CallContext } from './tool.ts';
import { uuidv7 } from '../lib/ids.ts';
import { clientText } from './client-text.ts';

/** Bounds on what an audit entry keeps of strings a client chose. */
export const AUDIT_TEXT_LIMITS = { tool: 128, client: 80, target: 300, args_shape: 500 } as const;

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
  /** an upstream call's argument shape (argsShape in args-shape.ts), never values */
  args_shape?: string | null;
}

/** Who acted, when there is no call context (a person confirming in the console). */
export interface Actor {
  request_id?: string | null;
  token_id?: string | null;
  token_preview?: string | null;
  user_id?: string | null;
  client?: string | null;
  client_source?: ClientSource | null;
  principal?: Principal | null;
}

/** An MCP call's principal: its token's user over the MCP endpoint (null for a call without a token). */
export const principalOf = (ctx: CallContext): Principal | null => (ctx.token ? tokenPrincipal(ctx.token, ctx.user, 'mcp') : null);

export const actorOf = (ctx: CallContext): Actor => ({
  request_id: ctx.request_id,
  token_id: ctx.token?.id ?? null,
  token_preview: ctx.token?.preview ?? null,
  user_id: ctx.user.id,
  client: ctx.client,
  client_source: ctx.client_source ?? null,
  principal: principalOf(ctx),
});

/**
 * Writes one audit entry per outcome and counts it in the stats. Strings a
 * client may have chosen (an unknown tool's name, its client name, a resource
 * URI) are kept bounded and free of control characters and lone surrogates.
 */
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
      tool: clientText(facts.tool, AUDIT_TEXT_LIMITS.tool),
      write: facts.write,
      result: facts.result,
      error_code: facts.error_code ?? null,
      source_plugin: facts.source_plugin ?? null,
      feature_key: facts.feature_key ?? null,
      site: this.site(),
      token_id: actor.token_id ?? null,
      token_preview: actor.token_preview ?? null,
      user_id: actor.user_id ?? null,
      target: facts.target == null ? null : clientText(facts.target, AUDIT_TEXT_LIMITS.target),
      duration_ms: Math.max(0, Math.round((facts.duration_ms ?? 0) * 100) / 100),
      client: actor.client == null ? null : clientText(actor.client, AUDIT_TEXT_LIMITS.client),
      ...(actor.client_source ? { client_source: actor.client_source } : {}),
      staged_id: facts.staged_id ?? null,
      principal: actor.principal ?? null,
      ...(facts.args_shape ? { args_shape: clientText(facts.args_shape, AUDIT_TEXT_LIMITS.args_shape) } : {}),
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
