import { useState } from 'react';
import { awaitsSettlement, shown, type SettleOutcome, type StagedPayload } from '../../../main/contract/index.ts';
import { ConfirmInline } from '../../components/confirm-inline.tsx';
import { ErrorBox } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { formatDateTime } from '../../lib/format.ts';
import { PreviewView } from './preview-view.tsx';

/**
 * Writes that were sent but whose outcome nobody knows (the service stopped,
 * or the upstream went silent, while they were in flight). Gatehouse never
 * sends them again; the person checks the other side and says what they
 * found. The agent sees that answer in staged_writes_status.
 */
export function UnknownOutcomes({
  all,
  onSettled,
}: {
  all: StagedPayload[];
  onSettled: (item: StagedPayload) => void;
}) {
  const open = all.filter(awaitsSettlement);
  if (open.length === 0) return null;
  return (
    <section aria-labelledby="ap-unknown" className="unknown-outcomes">
      <h2 id="ap-unknown">
        Check these yourself <span className="count">{open.length}</span>
      </h2>
      <p className="help">
        These writes were sent, but Gatehouse never learnt whether they took effect. They are not sent again. Look on
        the other side, then say what you found.
      </p>
      <ul className="approval-list">
        {open.map((item) => (
          <UnknownRow key={item.id} item={item} onSettled={onSettled} />
        ))}
      </ul>
    </section>
  );
}

const WORDS: Record<SettleOutcome, { button: string; question: string }> = {
  applied: {
    button: 'It was applied',
    question: 'Record that this write took effect? It becomes approved; nothing is sent.',
  },
  not_applied: {
    button: 'It was not applied',
    question: 'Record that this write did not take effect? Nothing is sent; the agent can stage it again.',
  },
};

function UnknownRow({ item, onSettled }: { item: StagedPayload; onSettled: (item: StagedPayload) => void }) {
  const api = useApi();
  const [asking, setAsking] = useState<SettleOutcome | null>(null);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<{ message: string; code: string } | null>(null);
  const base = `unknown-${item.id}`;

  const settle = async (outcome: SettleOutcome) => {
    setBusy(true);
    setFailure(null);
    const r = await api['staged.settle']({ id: item.id, outcome });
    setBusy(false);
    setAsking(null);
    if (r.ok) onSettled(r.data);
    else setFailure(r);
  };

  return (
    <li className="approval" data-id={item.id} aria-labelledby={`${base}-title`}>
      <div className="approval-head">
        <p className="approval-select" id={`${base}-title`}>
          <span className="tool">{shown(item.tool)}</span>{' '}
          <span className="summary">{shown(item.preview.summary)}</span>
        </p>
        <div className="approval-actions">
          {asking ? (
            <ConfirmInline
              question={WORDS[asking].question}
              confirmLabel={WORDS[asking].button}
              busy={busy}
              onConfirm={() => void settle(asking)}
              onCancel={() => setAsking(null)}
            />
          ) : (
            (['applied', 'not_applied'] as const).map((o) => (
              <button
                key={o}
                type="button"
                disabled={busy}
                aria-describedby={`${base}-title`}
                onClick={() => setAsking(o)}
              >
                {WORDS[o].button}
              </button>
            ))
          )}
        </div>
      </div>
      <p className="approval-meta">
        Sent at {formatDateTime(item.decided_at ?? item.created)} · <span className="code">{item.error_code}</span>
        {item.target ? (
          <>
            {' '}
            · target <code>{shown(item.target)}</code>
          </>
        ) : null}
      </p>
      {failure ? <ErrorBox message={failure.message} code={failure.code} /> : null}
      <div className="approval-detail">
        <PreviewView preview={item.preview} idBase={base} />
      </div>
    </li>
  );
}
