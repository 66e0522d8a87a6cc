import { shown, type UpstreamViewView } from '../../../main/contract/index.ts';
import type { ReviewActs } from './prompt-review.tsx';
import { DataTable } from '../../components/data-table.tsx';

/** What a view asks the host for, in words (network domains, camera, microphone, ...), or that it asks nothing more. */
export const asksOf = (v: UpstreamViewView): string => v.asks.join('; ') || 'nothing beyond the default sandbox';

/**
 * An upstream's MCP App views (docs/upstreams.md, "MCP Apps"): each view's
 * URI, what it asks for and its pin state; a new or changed one shows what
 * changed of what it asks for and its HTML's changed hunks, with Approve
 * (bound to the hash shown) and Hide. While a changed view waits, clients
 * get the approved one.
 */
export function ViewTable({
  views,
  busy,
  onReview,
}: {
  views: UpstreamViewView[];
  busy: boolean;
  onReview: (input: ReviewActs) => void;
}) {
  return (
    <DataTable
      className="upstream-tools"
      ariaLabel="Views"
      rows={views}
      rowKey={(v) => v.name}
      empty={null}
      columns={[
        {
          header: 'View',
          cell: (v) => (
            <>
              <code>{shown(v.name)}</code>
              {v.removed ? <span className="badge"> removed</span> : null}
            </>
          ),
        },
        { header: 'Asks for', cell: (v) => shown(asksOf(v)) },
        { header: 'State', cell: (v) => v.state },
        {
          header: 'Definition',
          cell: (v) => (
            <>
              <code title={v.hash ?? ''}>{v.hash ? `${v.hash.slice(0, 19)}…` : 'new'}</code>
              {v.state === 'hidden' && !v.pending && v.hash ? (
                <button
                  type="button"
                  className="inline-action"
                  disabled={busy}
                  aria-label={`Offer view ${v.name} again`}
                  onClick={() => onReview({ view_consent: [{ view: v.view, hash: v.hash! }] })}
                >
                  offer it again
                </button>
              ) : null}
              {v.pending ? (
                <div className="pending" aria-label={`Changes to view ${v.name}`}>
                  <p>
                    {v.pending.reason === 'new'
                      ? 'New view: not offered until approved.'
                      : 'It changed: clients get the approved one until you approve this.'}
                  </p>
                  {v.pending.changes
                    .filter((c) => c.field === 'ui' || c.field === 'mimeType')
                    .map((c) => (
                      <div key={c.field}>
                        <strong>{c.field}</strong>
                        {c.before !== undefined ? (
                          <pre className="del">- {shown(JSON.stringify(c.before, null, 2))}</pre>
                        ) : null}
                        {c.after !== undefined ? (
                          <pre className="add">+ {shown(JSON.stringify(c.after, null, 2))}</pre>
                        ) : null}
                      </div>
                    ))}
                  {v.html_diff ? (
                    <div aria-label={`HTML of view ${v.name}`}>
                      <strong>HTML ({v.html_diff.changed_lines} lines changed)</strong>
                      <pre className="del">{shown(v.html_diff.before)}</pre>
                      <pre className="add">{shown(v.html_diff.after)}</pre>
                    </div>
                  ) : null}
                  <button
                    type="button"
                    disabled={busy}
                    onClick={() => onReview({ view_consent: [{ view: v.view, hash: v.pending!.hash }] })}
                  >
                    Approve view {v.name}
                  </button>{' '}
                  <button
                    type="button"
                    className="danger-outline"
                    disabled={busy}
                    onClick={() => onReview({ hide_views: [v.view] })}
                  >
                    Hide view {v.name}
                  </button>
                </div>
              ) : null}
            </>
          ),
        },
      ]}
    />
  );
}
