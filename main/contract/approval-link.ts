import { z } from 'zod';
import { Preview, StagedBlock, StagedStatus } from './staged.ts';
import { lazySchema } from './lazy-schema.ts';

/**
 * An approval link's id: the base64url HMAC of one staged write's id under a
 * key only the service holds (main/core/staging/approval-links.ts). It names that one
 * write and grants nothing: the page behind it needs a console session.
 */
export const ApprovalLinkId = lazySchema(() => z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'not an approval link id'));

export const ByLink = lazySchema(() => z.object({ link: ApprovalLinkId }).strict());

/** The page's Approve names the preview it showed (`preview_hash`): a write whose preview differs is refused as stale, as on the desk. */
export const ApprovalConfirm = lazySchema(() =>
  z
    .object({
      link: ApprovalLinkId,
      preview_hash: z
        .string()
        .regex(/^[0-9a-f]{64}$/, 'a sha256 hex digest')
        .optional(),
    })
    .strict(),
);

/** Where the console serves the page of one link: `{console_url}#approve/<link>`. */
export const APPROVAL_ROUTE = 'approve';

/** What the page of an approval link shows of its write, and nothing of any other. */
export const ApprovalView = lazySchema(() =>
  z.object({
    link: z.string(),
    staged_id: z.string(),
    tool: z.string(),
    summary: z.string(),
    preview: Preview,
    target: z.string().nullable(),
    client: z.string().nullable(),
    token_label: z.string().nullable(),
    created: z.string(),
    expires_at: z.string(),
    status: StagedStatus,
    /** the preview's hash, echoed by the page's Approve; null for a record from before hashes */
    preview_hash: z.string().nullable().default(null),
    /** set while the write may not be approved (its token revoked or narrowed, or the policy now forbids the call): the page offers only Discard */
    blocked: StagedBlock.nullable().default(null),
    /** with `blocked`: why, in words (for `policy_denied`, the policies that forbid the call now) */
    blocked_reason: z.string().nullable().default(null),
  }),
);
export type ApprovalView = z.infer<typeof ApprovalView>;
