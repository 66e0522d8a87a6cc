import type { ApiEvent } from '../../contract/api.ts';
import type { Settings } from '../../contract/settings.ts';
import type { StagedBlock, StagedPayload, StagedView } from '../../contract/staged.ts';
import type { TokenRecord } from '../../contract/tokens.ts';
import type { User } from '../../contract/users.ts';
import { maskSecrets } from '../../lib/secret-scan.ts';
import type { Registry } from '../calls/registry.ts';
import { capabilitiesOf } from '../identity/users.ts';

/**
 * Whether the token that staged a write may still make it (docs/staging.md,
 * "Revoked and narrowed tokens"): a revoked token's writes are discarded, a
 * narrowed token's writes that it may not make now (its profile, scope or
 * user's role changed) cannot be approved. The desk never offers either.
 */
export interface StandingDeps {
  token: (id: string) => { record: TokenRecord; user: User } | null;
  registry: Pick<Registry, 'get' | 'isVisible'>;
  settings: () => Settings;
}

/** The token's side of it; the policy's (`policy_denied`) is asked apart, as it is asynchronous (Staging.blockNow). */
export type Standing = (item: StagedPayload) => Exclude<StagedBlock, 'policy_denied'> | null;

/** A pending write the desk may not offer to approve, and why in words. */
export interface Blocked {
  block: StagedBlock;
  reason: string;
}

export function standingOf(deps: StandingDeps): Standing {
  return (item) => {
    if (item.token_id === null) return null;
    const found = deps.token(item.token_id);
    if (!found || found.user.id !== item.user_id) return 'token_revoked';
    const tool = deps.registry.get(item.tool);
    // A tool gone (an upstream down) is the confirm's own refusal; a tool a person disabled is still theirs to approve.
    if (!tool) return null;
    const viewer = { capabilities: capabilitiesOf(found.user.role), scope: found.record.scope };
    return deps.registry.isVisible(tool, viewer, { ...deps.settings(), disabled_tools: [] }) ? null : 'token_narrowed';
  };
}

export const BLOCK_MESSAGES: Record<StagedBlock, string> = {
  token_revoked: 'the token that staged this write was revoked: it is discarded and cannot be approved',
  token_narrowed:
    "the token that staged this write may not make it any more (its profile, scope or user's role changed): it cannot be approved",
  policy_denied:
    'the policy in force now forbids this call, so it cannot be approved (change the policy, or discard it)',
};

/**
 * A write as the desk shows it: arguments and result masked for a person's
 * eyes (the stored preview is masked already), and `blocked` (with its
 * reason) when a pending write may not be approved.
 */
export function deskView(item: StagedPayload, blocked: Blocked | null): StagedView {
  return {
    ...item,
    payload: maskedOnce(item.payload),
    ...(item.result !== undefined ? { result: maskedOnce(item.result) } : {}),
    ...(blocked ? { blocked: blocked.block, blocked_reason: blocked.reason } : {}),
  };
}

/**
 * A stored payload or result masked once, not at every listing (the desk lists every pending write each time,
 * and masking scans every string): kept by the stored object itself, which a staged record never changes in
 * place (a decision stores a new record).
 */
const masked = new WeakMap<object, unknown>();
function maskedOnce<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return maskSecrets(value);
  if (!masked.has(value)) masked.set(value, maskSecrets(value));
  return masked.get(value) as T;
}

/**
 * A live event as the desk gets it: a staged write through deskView, anything
 * else as it is. Synchronous, so the token's standing only: a write is staged
 * only when the policy permits its call, and a policy change sends no staged
 * event; the desk's list and get ask the policy too (Staging.blockNow).
 */
export function deskEvent(event: ApiEvent, standing: Standing | undefined): ApiEvent {
  if (event.type !== 'staged') return event;
  const block = event.item.status === 'pending' && standing ? standing(event.item) : null;
  return { type: 'staged', item: deskView(event.item, block ? { block, reason: BLOCK_MESSAGES[block] } : null) };
}
