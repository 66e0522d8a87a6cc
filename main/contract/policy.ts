import { z } from 'zod';
import { POLICY_MAX_CHARS } from './policy-limits.ts';
import { lazySchema } from './lazy-schema.ts';

/**
 * The tool-call policy (Cedar; docs/policy.md): what the admin API, IPC and
 * the CLI exchange about it. People only: no client token reads or changes it.
 */

export { POLICY_MAX_CHARS };
/** A policy's text: bounded (policy-limits.ts). */
export const PolicyText = lazySchema(() =>
  z
    .string()
    .min(1, 'a policy needs at least one statement')
    .max(POLICY_MAX_CHARS, `a policy is at most ${POLICY_MAX_CHARS} characters`),
);

/** What options.json keeps: the person's policy; absent, the shipped default applies. */
export const StoredPolicy = lazySchema(() => z.object({ text: PolicyText, updated: z.string() }));
export type StoredPolicy = z.infer<typeof StoredPolicy>;

export const PolicyView = lazySchema(() =>
  z.object({
    /** `default`: the shipped policy (policy/default.cedar); `custom`: set by a person */
    source: z.enum(['default', 'custom']),
    text: z.string(),
    updated: z.string().nullable(),
    /** the ids of its policies (`@id("...")`, else policy0, policy1, ...) */
    policies: z.array(z.string()),
    /** the Cedar schema every policy is validated against */
    schema: z.string(),
    /** why the stored policy cannot be used (it does not parse or validate): every call is refused until it is fixed */
    problem: z.string().nullable().default(null),
  }),
);
export type PolicyView = z.infer<typeof PolicyView>;

export const PolicyTextInput = lazySchema(() => z.object({ text: PolicyText }).strict());
export const PolicyCheckAnswer = lazySchema(() => z.object({ policies: z.array(z.string()) }));
export type PolicyCheckAnswer = z.infer<typeof PolicyCheckAnswer>;

export const PolicyExplainInput = lazySchema(() =>
  z
    .object({
      token_id: z.string().min(1).max(64),
      tool: z.string().min(1).max(128),
      /** the call's arguments; `{}` when left out */
      args: z.record(z.string(), z.unknown()).optional(),
    })
    .strict(),
);

export const PolicyVerdictView = lazySchema(() =>
  z.object({
    decision: z.enum(['allow', 'deny']),
    /** the policies that made the decision: the permits that allowed it, or the forbids that refused it (none: nothing permits) */
    policies: z.array(z.string()),
    /** policies whose evaluation failed (they are skipped, as Cedar does) */
    errors: z.array(z.string()),
  }),
);
export type PolicyVerdictView = z.infer<typeof PolicyVerdictView>;

export const PolicyExplainAnswer = lazySchema(() =>
  z.object({
    token_id: z.string(),
    tool: z.string(),
    /** what a tools/call with these arguments would do now */
    outcome: z.enum(['unknown_tool', 'invalid_params', 'refused', 'runs', 'staged', 'runs_without_approval']),
    /** one sentence for a person */
    summary: z.string(),
    call: PolicyVerdictView.nullable(),
    run_without_approval: PolicyVerdictView.nullable(),
    /** the context the policy saw (argument names, secret kinds, argument values, approval mode, time) */
    context: z.record(z.string(), z.unknown()),
  }),
);
export type PolicyExplainAnswer = z.infer<typeof PolicyExplainAnswer>;
