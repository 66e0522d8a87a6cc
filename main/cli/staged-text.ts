import type { FieldChange, StagedView } from '../contract/staged.ts';
import { awaitsSettlement } from '../contract/staged-settlement.ts';
import { isHunkText, unifiedLines } from '../contract/diff-format.ts';
import { principalLabel } from '../contract/principal-label.ts';
import { safe } from './output.ts';

/** One side of a change as the console shows it: a value the write does not have reads "(none)" before and "(removed)" after. */
const side = (value: FieldChange['before'], missing: string): string =>
  value === undefined ? missing : JSON.stringify(value);

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Why a pending write cannot be approved, in a few words (`blocked_reason` says more). */
export const BLOCKED_TEXT: Record<NonNullable<StagedView['blocked']>, string> = {
  token_revoked: 'its token was revoked',
  token_narrowed: 'its token may no longer make it',
  policy_denied: 'the policy in force now forbids the call',
};

/** `gatehouse staged show` for a person: the summary, field by field, then who decided. */
export function stagedText(s: StagedView): string {
  return [
    safe`${s.id}  ${s.status}  ${s.tool}`,
    safe`${s.preview.summary}`,
    ...(s.preview.current ? [safe`now: ${s.preview.current.summary}`] : []),
    ...s.preview.changes.map((ch) =>
      isHunkText(ch.before) || isHunkText(ch.after)
        ? [safe`  ${ch.field}:`, ...unifiedLines(str(ch.before), str(ch.after)).map((l) => safe`    ${l}`)].join('\n')
        : safe`  ${ch.field}:` +
          '\n' +
          safe`    - ${side(ch.before, '(none)')}` +
          '\n' +
          safe`    + ${side(ch.after, '(removed)')}`,
    ),
    ...(s.preview.current?.states ?? []).map((st) =>
      [safe`  ${st.label}, now:`, ...st.text.split('\n').map((l) => safe`    ${l}`)].join('\n'),
    ),
    ...(s.preview.arguments
      ? [
          JSON.stringify(s.preview.arguments, null, 2)
            .split('\n')
            .map((l) => safe`${l}`)
            .join('\n'),
        ]
      : []),
    safe`expires ${s.expires_at}`,
    // Only a write that can still be approved is offered the confirm command: a failed, decided or blocked one would be refused.
    ...(s.preview_hash
      ? [
          s.status === 'pending' && !s.blocked
            ? safe`preview ${s.preview_hash} (gatehouse staged confirm ${s.id} --preview-hash ${s.preview_hash})`
            : safe`preview ${s.preview_hash}`,
        ]
      : []),
    ...(s.blocked ? [safe`cannot be approved: ${BLOCKED_TEXT[s.blocked]} (${s.blocked})`] : []),
    ...(s.blocked === 'policy_denied' && s.blocked_reason ? [safe`  ${s.blocked_reason}`] : []),
    ...(s.decided_by ? [safe`decided by ${principalLabel(s.decided_by)} at ${s.decided_at ?? '-'}`] : []),
    ...(s.error_code ? [safe`error: ${s.error_code}${s.error_message ? `: ${s.error_message}` : ''}`] : []),
    ...(s.settlement
      ? [
          safe`settled by ${principalLabel(s.settlement.by)} at ${s.settlement.at}: ${s.settlement.outcome === 'applied' ? 'it was applied' : 'it was not applied'} (was ${s.settlement.was})`,
        ]
      : []),
    ...(awaitsSettlement(s)
      ? [safe`its outcome is unknown: check the other side, then: gatehouse staged settle ${s.id} applied|not-applied`]
      : []),
  ].join('\n');
}
