import type { FieldChange, UpstreamPromptView, UpstreamReviewInput } from '../../../main/contract/index.ts';
import { DataTable } from '../../components/data-table.tsx';

/** What the panel's buttons send to upstreams.review (an approval names the hash of the diff shown). */
export type ReviewActs = Omit<UpstreamReviewInput, 'id'>;

/** A quarantined tool or prompt: why it waits, its changes field by field (old `-`, new `+`), Approve and Hide. */
export function PendingReview({
  label,
  why,
  changes,
  busy,
  onApprove,
  onHide,
}: {
  label: string;
  why: string;
  changes: FieldChange[];
  busy: boolean;
  onApprove: () => void;
  onHide: () => void;
}) {
  return (
    <div className="pending" aria-label={`Changes to ${label}`}>
      <p>{why}: not offered until approved.</p>
      {changes.map((c) => (
        <div key={c.field}>
          <strong>{c.field}</strong>
          {c.before !== undefined ? <pre className="del">- {JSON.stringify(c.before, null, 2)}</pre> : null}
          {c.after !== undefined ? <pre className="add">+ {JSON.stringify(c.after, null, 2)}</pre> : null}
        </div>
      ))}
      <button type="button" disabled={busy} onClick={onApprove}>
        Approve {label}
      </button>{' '}
      <button type="button" className="danger-outline" disabled={busy} onClick={onHide}>
        Hide {label}
      </button>
    </div>
  );
}

/**
 * An upstream's prompts, pinned like its tools (docs/upstreams.md): state and
 * pinned hash; a new or changed one shows its diff with Approve (bound to the
 * hash shown) and Hide; a hidden one can be offered again.
 */
export function PromptTable({
  prompts,
  busy,
  onReview,
}: {
  prompts: UpstreamPromptView[];
  busy: boolean;
  onReview: (input: ReviewActs) => void;
}) {
  return (
    <DataTable
      className="upstream-tools"
      ariaLabel="Prompts"
      rows={prompts}
      rowKey={(p) => p.name}
      empty={null}
      columns={[
        {
          header: 'Prompt',
          cell: (p) => (
            <>
              <code>{p.name}</code>
              {p.removed ? <span className="badge"> removed</span> : null}
            </>
          ),
        },
        { header: 'State', cell: (p) => p.state },
        {
          header: 'Definition',
          cell: (p) => (
            <>
              <code title={p.hash ?? ''}>{p.hash ? `${p.hash.slice(0, 19)}…` : 'new'}</code>
              {p.state === 'hidden' && !p.pending && p.hash ? (
                <button
                  type="button"
                  className="inline-action"
                  disabled={busy}
                  aria-label={`Offer prompt ${p.name} again`}
                  onClick={() => onReview({ prompt_consent: [{ prompt: p.prompt, hash: p.hash! }] })}
                >
                  offer it again
                </button>
              ) : null}
              {p.pending ? (
                <PendingReview
                  label={`prompt ${p.name}`}
                  why={p.pending.reason === 'new' ? 'New prompt' : 'Its definition changed'}
                  changes={p.pending.changes}
                  busy={busy}
                  onApprove={() => onReview({ prompt_consent: [{ prompt: p.prompt, hash: p.pending!.hash }] })}
                  onHide={() => onReview({ hide_prompts: [p.prompt] })}
                />
              ) : null}
            </>
          ),
        },
      ]}
    />
  );
}
