import { z } from 'zod';
import { ClientSource } from './audit.ts';
import { DecidedBy, Principal } from './principal.ts';
import { lazySchema } from './lazy-schema.ts';

export const STAGED_LIFETIME_MS = 15 * 60 * 1000;
/** the longest reason a failed write keeps (error_message) */
export const STAGED_ERROR_MESSAGE_MAX = 1000;

/**
 * What a client can make the service hold in staged writes. A write whose
 * payload and preview take more than STAGED_WRITE_MAX_BYTES is refused with
 * `staged_too_large`; past the pending counts (or bytes) a new write is
 * refused with `staged_limit_reached` until a person decides some.
 */
export const STAGED_LIMITS = {
  /** payload + preview of one write, as UTF-8 JSON */
  writeBytes: 1024 * 1024,
  /** pending writes of one token (or, without a token, one user) */
  pendingPerToken: 50,
  pendingTotal: 500,
  /** all pending writes together, as stored */
  pendingBytes: 128 * 1024 * 1024,
  /** decided writes kept for the console's history and "a second confirm returns the first result" */
  historyEntries: 500,
  historyBytes: 64 * 1024 * 1024,
} as const;

/**
 * `applying`: a confirm recorded its intent and is applying the write (or
 * was, when the service stopped: recovery at the next start completes it or
 * rolls it back). Every other state but `pending` is final.
 */
export const StagedStatus = lazySchema(() =>
  z.enum(['pending', 'applying', 'confirmed', 'discarded', 'expired', 'failed']),
);
export type StagedStatus = z.infer<typeof StagedStatus>;

/** One line of a readable preview: a field and its value before and after. */
export const FieldChange = lazySchema(() =>
  z.object({
    field: z.string(),
    before: z.unknown().optional(),
    after: z.unknown().optional(),
  }),
);
export type FieldChange = z.infer<typeof FieldChange>;

/**
 * What an upstream write's target is now, read by the upstream's own read tools when it was staged
 * (docs/staging.md, "What an upstream write changes"). For the desk only: the agent's receipt never
 * carries it, nor the `changes` built from it (agentPreview).
 */
export const CurrentTarget = lazySchema(() =>
  z.object({
    /** the desk's short line: "notes.md: 2 lines changed", "new file, 12 lines" */
    summary: z.string(),
    /** sha256 of what the reads returned: a confirm reads again and refuses as stale_preview when it differs */
    version: z.string().nullable(),
    /** why the target could not be shown (the read failed, timed out, was too large): the arguments are shown */
    unavailable: z.string().nullable(),
    /** what each read showed, for writes whose effect is not a text diff (a delete, a move) */
    states: z.array(z.object({ label: z.string(), text: z.string() })).default([]),
  }),
);
export type CurrentTarget = z.infer<typeof CurrentTarget>;

/** A preview a person can read: a summary, field-by-field changes, or pretty-printed arguments. */
export const Preview = lazySchema(() =>
  z.object({
    summary: z.string(),
    kind: z.enum(['diff', 'arguments']).default('diff'),
    changes: z.array(FieldChange).default([]),
    arguments: z.unknown().optional(),
    current: CurrentTarget.optional(),
  }),
);
export type Preview = z.infer<typeof Preview>;

/**
 * What makes two pending writes stale for each other (the desk's "approving this one makes those stale"):
 * a page write's target with its version, or an upstream write's file as its preview read it (a confirm
 * reads it again: docs/staging.md). Null when approving another write changes nothing for this one.
 */
export function staleKeyOf(x: Pick<StagedPayload, 'target' | 'target_version' | 'preview'>): string | null {
  if (x.target && x.target_version !== null) return x.target;
  const file = x.preview.current?.version ? x.preview.changes[0]?.field : undefined;
  return x.target && file ? `${x.target}\0${file}` : null;
}

/** The preview as the agent that staged the write gets it: what was read of the target stays on the desk. */
export const agentPreview = (p: Preview): Preview =>
  p.current ? { summary: p.summary, kind: 'arguments', changes: [], arguments: p.arguments } : p;

/**
 * Settling a write whose outcome is unknown (docs/upstreams.md, "Outcome
 * unknown"): the service could not learn whether it took effect, a person
 * checked on the upstream's side and says so. Nothing is sent again.
 */
export const SettleOutcome = lazySchema(() => z.enum(['applied', 'not_applied']));
export type SettleOutcome = z.infer<typeof SettleOutcome>;
/** The error code a write settled as not applied ends with. */
export const NOT_APPLIED_CODE = 'not_applied';
export const Settlement = lazySchema(() =>
  z.object({
    outcome: SettleOutcome,
    /** the code it settled (`outcome_unknown`, `apply_interrupted`) */
    was: z.string().max(64),
    by: Principal,
    at: z.string(),
  }),
);
export type Settlement = z.infer<typeof Settlement>;

/** The staged payload (seed: tool, payload, preview, user_id, created) plus what staging needs. */
export const StagedPayload = lazySchema(() =>
  z.object({
    id: z.string(),
    tool: z.string(),
    plugin: z.string(),
    payload: z.record(z.string(), z.unknown()),
    preview: Preview,
    user_id: z.string(),
    token_id: z.string().nullable(),
    token_label: z.string().nullable().default(null),
    client: z.string().nullable().default(null),
    /** how `client` is known: from the staging request itself, or a guess */
    client_source: ClientSource.nullable().default(null),
    request_id: z.string().nullable().default(null),
    created: z.string(),
    expires_at: z.string(),
    /** sha256 of the canonical payload, so a confirm applies exactly what was previewed */
    payload_hash: z.string(),
    /** what the write touches, e.g. "page:12" */
    target: z.string().nullable(),
    /** the target's version when the preview was made; null for creations */
    target_version: z.number().int().nullable(),
    status: StagedStatus.default('pending'),
    decided_at: z.string().nullable().default(null),
    /** who decided (a Principal); an older record's string reads as a legacy principal */
    decided_by: DecidedBy.default(null),
    /** the apply result, kept so a second confirm returns the first result */
    result: z.unknown().optional(),
    error_code: z.string().nullable().default(null),
    /** a failed write's reason in words (an upstream's own message), masked and bounded: what `error_code` alone does not say */
    error_message: z.string().max(STAGED_ERROR_MESSAGE_MAX).nullable().optional(),
    /** a person's word on a write whose outcome was unknown (staged.settle); absent until then */
    settlement: Settlement.optional(),
    /** sha256 of the canonical preview as stored (what a person is shown); a person's confirm names it (docs/staging.md, "Bound to what was shown"); absent in older records */
    preview_hash: z.string().nullable().optional(),
    /** an upstream tool's pinned definition hash when the write was staged: a confirm after the definition changed is refused as stale */
    definition_hash: z.string().nullable().optional(),
    /** the call's argument names and the kinds of secret found in its arguments: what the policy is asked again at a confirm (docs/policy.md); absent in older records */
    call_shape: z
      .object({
        arg_names: z.array(z.string()),
        secret_kinds: z.array(z.string()),
        /** the argument values as the policy reads them (main/core/policy/arg-values.ts); absent in older records */
        arg_values: z
          .object({ args: z.record(z.string(), z.string()), lists: z.record(z.string(), z.array(z.string())) })
          .optional(),
      })
      .optional(),
  }),
);
export type StagedPayload = z.infer<typeof StagedPayload>;

/** Why a pending write can no longer be approved: the token that staged it was revoked, or narrowed so that it may not make it now, or the policy in force now forbids the call. */
export const StagedBlock = lazySchema(() => z.enum(['token_revoked', 'token_narrowed', 'policy_denied']));
export type StagedBlock = z.infer<typeof StagedBlock>;

/** A staged write as the desk (console, tray, CLI) sees it: secrets masked, and `blocked` when it may not be approved. */
export const StagedView = lazySchema(() =>
  StagedPayload.extend({
    blocked: StagedBlock.nullable().optional(),
    /** with `blocked`: why, in words (for `policy_denied`, the refusal naming the policies that forbid the call now) */
    blocked_reason: z.string().nullable().optional(),
  }),
);
export type StagedView = z.infer<typeof StagedView>;

/** What a write tool returns instead of changing anything. */
export const StagedResponse = lazySchema(() =>
  z.object({
    status: z.literal('pending_approval'),
    staged_id: z.string(),
    preview: Preview,
    expires_at: z.string(),
  }),
);
export type StagedResponse = z.infer<typeof StagedResponse>;
