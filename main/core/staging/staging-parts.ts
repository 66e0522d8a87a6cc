import { createHash } from 'node:crypto';
import type { StagedPayload } from '../../contract/staged.ts';
import type { PersonPrincipal, Principal } from '../../contract/principal.ts';
import type { CallContext, StagedRef, WritePlan, WriteTool } from '../calls/tool.ts';
import { shortId } from '../../lib/ids.ts';
import { maskSecrets } from '../../lib/secret-scan.ts';
import { principalOf } from '../calls/auditor.ts';
import { GatehouseError } from '../errors.ts';

// The small pure pieces of staging (staging.ts): the payload hash, who decides, the errors and refs it hands out.

/** Canonical JSON (sorted keys), so the hash does not depend on key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
export const hashPayload = (p: unknown): string => createHash('sha256').update(canonicalJson(p)).digest('hex');

/**
 * Who decides: a person (console, tray, CLI; `invoke` let only people through)
 * or, in `agent` mode, the token's own user through an MCP tool (checked here
 * at decision time by checkAgentDecision).
 */
export type Decider =
  | { kind: 'person'; principal: PersonPrincipal; request_id?: string | null; preview_hash?: string | null }
  /** `policy`: the write runs without a person because these policies permit `run_without_approval` (main/core/policy/policy-gate.ts) */
  | { kind: 'agent'; ctx: CallContext; policy?: readonly string[] };

/** What `decided_by` records: the person's principal, or the agent's token over MCP. */
export const deciderPrincipal = (by: Decider | Principal): Principal => {
  if ('ctx' in by) return principalOf(by.ctx) ?? { kind: 'legacy', label: `agent:${by.ctx.user.login}` };
  return 'principal' in by ? by.principal : by;
};
/** Recovery's own decisions (an apply it cannot confirm) are the service's. */
export const RECOVERY: Principal = { kind: 'service', job: 'recovery' };

export const expiredError = (item: StagedPayload) =>
  new GatehouseError(
    'staged_expired',
    `staged write '${item.id}' expired at ${item.expires_at}; ask the agent to stage it again`,
  );

export const refOf = (item: StagedPayload): StagedRef => ({
  id: item.id,
  since: Date.parse(item.decided_at ?? item.created),
});

/** A new pending write as staged by `ctx` from `plan`, open until `now + lifetimeMs`. */
export function newStagedItem(
  tool: WriteTool,
  plan: WritePlan,
  ctx: CallContext,
  now: number,
  lifetimeMs: number,
): StagedPayload {
  // What a person is shown never holds a secret (docs/secrets.md); the binding is to exactly that.
  const preview = maskSecrets(plan.preview);
  return {
    id: shortId('stg'),
    tool: tool.name,
    plugin: tool.plugin,
    payload: plan.payload,
    preview,
    user_id: ctx.user.id,
    token_id: ctx.token?.id ?? null,
    token_label: ctx.token?.label ?? null,
    client: ctx.client,
    client_source: ctx.client_source ?? null,
    request_id: ctx.request_id,
    created: new Date(now).toISOString(),
    expires_at: new Date(now + lifetimeMs).toISOString(),
    payload_hash: hashPayload(plan.payload),
    target: plan.target,
    target_version: plan.target_version,
    status: 'pending',
    decided_at: null,
    decided_by: null,
    error_code: null,
    preview_hash: hashPayload(preview),
    definition_hash: tool.definition_hash ?? null,
  };
}
