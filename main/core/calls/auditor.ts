import type { AuditEntry, AuditResult, ClientSource } from '../../contract/audit.ts';
import { tokenPrincipal, type Principal } from '../../contract/principal.ts';
import { principalLabel } from '../../contract/principal-label.ts';
import type { AuditSink } from '../ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { StatsRecorder } from './stats.ts';
import type { CallContext } from './tool.ts';
import { uuidv7 } from '../../lib/ids.ts';
import { clientText } from './client-text.ts';

/** Bounds on what an audit entry keeps of strings a client chose. */
export const AUDIT_TEXT_LIMITS = {
  tool: 128,
  client: 80,
  target: 300,
  args_shape: 500,
  asked: 300,
  reason: 300,
} as const;

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
  /** what the tool asked of the client mid-call (e.g. `elicitation/create:form`), never what was asked or answered */
  asked?: string | null;
  /** an MCP App's tool: its view, and whether only a view could call it */
  view?: AuditEntry['view'];
  /** the policy ids behind a policy decision (docs/policy.md) */
  policy?: readonly string[] | null;
  /** a staged decision: the hashes the approval was bound to (approval-binding.ts) */
  binding?: AuditEntry['binding'];
  /** why it was refused, where the error code alone does not say; never the refused values */
  reason?: string | null;
}

/**
 * Who acted: the principal (person, token, service), plus what only the
 * moment knows. The entry's token and user columns are derived from it in
 * `Auditor.record`: a token principal gives token_id, token_preview and the
 * user; `user_id` is given apart only where the entry is about someone else's
 * write (a person deciding, an expiry) or a call without a token.
 */
export interface Actor {
  principal: Principal | null;
  /** the user the entry is about; default: a token principal's user */
  user_id?: string | null;
  request_id?: string | null;
  /** the client's name; default: a person's or service's principal label */
  client?: string | null;
  client_source?: ClientSource | null;
}

/** An MCP call's principal: its token's user over the MCP endpoint (null for a call without a token). */
export const principalOf = (ctx: CallContext): Principal | null =>
  ctx.token ? tokenPrincipal(ctx.token, ctx.user, 'mcp') : null;

export const actorOf = (ctx: CallContext): Actor => ({
  principal: principalOf(ctx),
  user_id: ctx.user.id,
  request_id: ctx.request_id,
  client: ctx.client,
  client_source: ctx.client_source ?? null,
});

/** The entry's columns for who acted. */
function whoColumns(actor: Actor): Pick<AuditEntry, 'token_id' | 'token_preview' | 'user_id' | 'client' | 'principal'> {
  const p = actor.principal;
  const token = p?.kind === 'token' ? p : null;
  const client = actor.client !== undefined ? actor.client : p && !token ? principalLabel(p) : null;
  return {
    token_id: token?.token_id ?? null,
    token_preview: token?.token_preview ?? null,
    user_id: actor.user_id !== undefined ? actor.user_id : (token?.user_id ?? null),
    client: client == null ? null : clientText(client, AUDIT_TEXT_LIMITS.client),
    principal: p,
  };
}

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
      ...whoColumns(actor),
      target: facts.target == null ? null : clientText(facts.target, AUDIT_TEXT_LIMITS.target),
      duration_ms: Math.max(0, Math.round((facts.duration_ms ?? 0) * 100) / 100),
      ...(actor.client_source ? { client_source: actor.client_source } : {}),
      staged_id: facts.staged_id ?? null,
      ...(facts.args_shape ? { args_shape: clientText(facts.args_shape, AUDIT_TEXT_LIMITS.args_shape) } : {}),
      ...(facts.asked ? { asked: clientText(facts.asked, AUDIT_TEXT_LIMITS.asked) } : {}),
      ...(facts.view
        ? { view: { uri: clientText(facts.view.uri, AUDIT_TEXT_LIMITS.target), only: facts.view.only } }
        : {}),
      ...(facts.policy?.length ? { policy: facts.policy.slice(0, 20).map((p) => p.slice(0, 100)) } : {}),
      ...(facts.binding ? { binding: facts.binding } : {}),
      ...(facts.reason ? { reason: clientText(facts.reason, AUDIT_TEXT_LIMITS.reason) } : {}),
    };
    this.sink.append(entry);
    if (!this.uncounted) this.stats.count(entry.tool, entry.result);
    return entry;
  }

  private uncounted = false;

  /** A person's action on the configuration (an upstream's sandbox grants): audited like a call, not counted as a tool's use. */
  recordAction(facts: AuditFacts, actor: Actor): AuditEntry {
    this.uncounted = true;
    try {
      return this.record(facts, actor);
    } finally {
      this.uncounted = false;
    }
  }

  /** Waits until every entry recorded so far is durable; a decision is acknowledged only after this. */
  durable(): Promise<void> {
    return this.sink.sync();
  }
}
