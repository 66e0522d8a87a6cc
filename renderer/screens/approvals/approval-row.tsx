import { memo } from 'react';
import type { StagedView } from '../../../main/contract/index.ts';
import { shown } from '../../../main/contract/index.ts';
import { useNow } from '../../lib/clock.ts';
import { formatDateTime, formatTime, plural } from '../../lib/format.ts';
import { Countdown } from './countdown.tsx';
import { PreviewView } from './preview-view.tsx';

export interface RowProps {
  item: StagedView;
  /** the asking user's login (or id until users are loaded) */
  userName: string;
  selected: boolean;
  busy: boolean;
  /** why the service refused this write; the row stays until the person dismisses it */
  refusal: string | undefined;
  /** other pending writes to the same target: approving one makes the others stale */
  sameTarget: number;
  onSelect: (id: string) => void;
  onApprove: (id: string) => void;
  onDiscard: (id: string) => void;
  onDismiss: (id: string) => void;
}

/** Why the desk offers no Approve for this write (the service would refuse it): only Discard is left. */
const BLOCKED: Record<NonNullable<StagedView['blocked']>, string> = {
  token_revoked: 'The token that asked for this write was revoked: it can no longer be approved. Discard it.',
  token_narrowed:
    "The token that asked for this write may not make it any more (its profile, scope or user's role changed): it can no longer be approved. Discard it.",
  policy_denied:
    'The policy in force now forbids this call: it cannot be approved unless a person changes the policy. Discard it, or change the policy.',
};

const GUESS: Record<string, string> = {
  remembered: 'a guess: the last client that introduced itself with this token',
  user_agent: 'a guess: from the User-Agent header',
  address: 'a guess: only the address is known',
};

/**
 * One pending write. Memoized: with hundreds waiting, a change to one row
 * (or the selection) re-renders two rows, and the clock only the countdowns
 * and the Approve buttons. Only the selected row renders its full preview.
 */
export const ApprovalRow = memo(function ApprovalRow({
  item,
  userName,
  selected,
  busy,
  refusal,
  sameTarget,
  onSelect,
  onApprove,
  onDiscard,
  onDismiss,
}: RowProps) {
  const who = item.token_label ?? item.token_id ?? 'no token';
  const base = `staged-${item.id}`;
  const guess =
    item.client && item.client_source && item.client_source !== 'request' ? GUESS[item.client_source] : undefined;
  return (
    <li
      className={`approval${selected ? ' selected' : ''}${refusal ? ' refused' : ''}`}
      aria-current={selected ? 'true' : undefined}
      data-id={item.id}
    >
      <div className="approval-head">
        <button
          type="button"
          className="approval-select"
          id={`${base}-title`}
          aria-expanded={selected}
          aria-controls={selected ? `${base}-detail` : undefined}
          onClick={() => onSelect(item.id)}
        >
          <span className="tool">{shown(item.tool)}</span>
          <span className="summary">{shown(item.preview.summary)}</span>
        </button>
        {refusal ? null : <Countdown expiresAt={item.expires_at} />}
        <div className="approval-actions">
          {refusal ? (
            <button type="button" onClick={() => onDismiss(item.id)} aria-describedby={`${base}-refusal`}>
              Dismiss
            </button>
          ) : (
            <>
              {item.blocked ? null : (
                <ApproveButton
                  expiresAt={item.expires_at}
                  busy={busy}
                  describedBy={`${base}-title`}
                  onApprove={() => onApprove(item.id)}
                />
              )}
              <button
                type="button"
                disabled={busy}
                onClick={() => onDiscard(item.id)}
                aria-describedby={`${base}-title`}
              >
                Discard
              </button>
            </>
          )}
        </div>
      </div>
      <p className="approval-meta">
        <span>
          Asked by <strong>{shown(who)}</strong> for user <strong>{userName}</strong>
          {item.client ? (
            <>
              {' '}
              via <strong>{shown(item.client)}</strong>
              {guess ? <span className="guess"> ({guess})</span> : null}
            </>
          ) : null}
        </span>
        <span title={formatDateTime(item.created)}> at {formatTime(item.created)}</span>
        {item.target ? (
          <span>
            {' '}
            · target <code>{shown(item.target)}</code>
          </span>
        ) : null}
      </p>
      {sameTarget > 0 && !refusal ? (
        <p className="approval-hint">
          {plural(sameTarget, 'other pending write')} {sameTarget === 1 ? 'changes' : 'change'}{' '}
          {staleName(item) ? <code>{shown(staleName(item)!)}</code> : 'this target'} too: approving this one makes{' '}
          {sameTarget === 1 ? 'that one' : 'those'} stale.
        </p>
      ) : null}
      {item.blocked && !refusal ? (
        <p className="row-error" id={`${base}-blocked`}>
          {BLOCKED[item.blocked]}
          {item.blocked === 'policy_denied' && item.blocked_reason ? ` Why: ${item.blocked_reason}.` : null}
        </p>
      ) : null}
      {refusal ? (
        <div className="row-error" role="alert" id={`${base}-refusal`}>
          <p>{refusal}</p>
        </div>
      ) : null}
      {selected ? (
        <div className="approval-detail" id={`${base}-detail`}>
          <PreviewView preview={item.preview} idBase={base} />
        </div>
      ) : null}
    </li>
  );
});

/** Approve, switched off the moment the write expires (the service would refuse it). */
function ApproveButton({
  expiresAt,
  busy,
  describedBy,
  onApprove,
}: {
  expiresAt: string;
  busy: boolean;
  describedBy: string;
  onApprove: () => void;
}) {
  const expired = Date.parse(expiresAt) <= useNow();
  return (
    <button
      type="button"
      className="primary"
      disabled={busy || expired}
      onClick={onApprove}
      aria-describedby={describedBy}
      title={expired ? 'Expired: it can no longer be approved' : undefined}
    >
      Approve
    </button>
  );
}

/** What the other writes change too: a page, or the upstream file the preview read. */
const staleName = (item: StagedView): string | null =>
  item.target_version === null && item.preview.current?.version
    ? (item.preview.changes[0]?.field ?? null)
    : item.target;
