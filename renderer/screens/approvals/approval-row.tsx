import { memo } from 'react';
import type { StagedPayload } from '../../../main/contract/index.ts';
import { formatDateTime, formatTime } from '../../lib/format.ts';
import { Countdown } from './countdown.tsx';
import { PreviewView } from './preview-view.tsx';

export interface RowProps {
  item: StagedPayload;
  /** the asking user's login (or id until users are loaded) */
  userName: string;
  selected: boolean;
  busy: boolean;
  error: string | undefined;
  onSelect: (id: string) => void;
  onApprove: (id: string) => void;
  onDiscard: (id: string) => void;
}

/**
 * One pending write. Memoized: with hundreds waiting, a change to one row
 * (or the selection) re-renders two rows, and the clock only the countdowns.
 * Only the selected row renders its full preview.
 */
export const ApprovalRow = memo(function ApprovalRow({ item, userName, selected, busy, error, onSelect, onApprove, onDiscard }: RowProps) {
  const who = item.token_label ?? item.token_id ?? 'no token';
  const base = `staged-${item.id}`;
  return (
    <li className={`approval${selected ? ' selected' : ''}`} aria-current={selected ? 'true' : undefined} data-id={item.id}>
      <div className="approval-head">
        <button
          type="button"
          className="approval-select"
          id={`${base}-title`}
          aria-expanded={selected}
          aria-controls={selected ? `${base}-detail` : undefined}
          onClick={() => onSelect(item.id)}
        >
          <span className="tool">{item.tool}</span>
          <span className="summary">{item.preview.summary}</span>
        </button>
        <Countdown expiresAt={item.expires_at} />
        <div className="approval-actions">
          <button type="button" className="primary" disabled={busy} onClick={() => onApprove(item.id)} aria-describedby={`${base}-title`}>
            Approve
          </button>
          <button type="button" disabled={busy} onClick={() => onDiscard(item.id)} aria-describedby={`${base}-title`}>
            Discard
          </button>
        </div>
      </div>
      <p className="approval-meta">
        <span>
          Asked by <strong>{who}</strong> for user <strong>{userName}</strong>
          {item.client ? <> via <strong>{item.client}</strong></> : null}
        </span>
        <span title={formatDateTime(item.created)}> at {formatTime(item.created)}</span>
        {item.target ? <span> · target <code>{item.target}</code></span> : null}
      </p>
      {error ? (
        <p className="row-error" role="alert">
          {error}
        </p>
      ) : null}
      {selected ? (
        <div className="approval-detail" id={`${base}-detail`}>
          <PreviewView preview={item.preview} idBase={base} />
        </div>
      ) : null}
    </li>
  );
});
