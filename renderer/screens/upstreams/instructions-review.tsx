import { shown, type UpstreamInstructionsView } from '../../../main/contract/index.ts';
import type { ReviewActs } from './prompt-review.tsx';

/**
 * An upstream's instructions (docs/upstreams.md, "Instructions"): what its
 * server tells the model, given to clients in Gatehouse's initialize answer
 * under the upstream's name once approved. Its state and hash; new or changed
 * ones show their text (or its changed lines) with Approve (bound to the hash
 * shown) and Hide. While changed ones wait, clients get the approved text.
 */
export function InstructionsReview({
  instructions,
  busy,
  onReview,
}: {
  instructions: UpstreamInstructionsView | null | undefined;
  busy: boolean;
  onReview: (input: ReviewActs) => void;
}) {
  if (!instructions) return null;
  const i = instructions;
  const cut = i.length > i.text.length ? ` (cut at ${i.text.length} of ${i.length} characters)` : '';
  return (
    <section aria-label="Instructions">
      <h3>Instructions to the model</h3>
      <p>
        {i.state}
        {i.removed ? ' (no longer sent)' : ''} ·{' '}
        <code title={i.hash ?? ''}>{i.hash ? `${i.hash.slice(0, 19)}…` : 'new'}</code>
        {cut}
        {i.state === 'hidden' && !i.pending && i.hash ? (
          <button
            type="button"
            className="inline-action"
            disabled={busy}
            aria-label="Give its instructions to clients again"
            onClick={() => onReview({ instructions_consent: { hash: i.hash! } })}
          >
            give them again
          </button>
        ) : null}
      </p>
      {i.pending ? (
        <div className="pending" aria-label="Changes to its instructions">
          <p>
            {i.pending.reason === 'new'
              ? 'New instructions: given to no client until approved.'
              : 'They changed: clients get the approved text until you approve this.'}
          </p>
          {i.text_diff ? (
            <div>
              <strong>Text ({i.text_diff.changed_lines} lines changed)</strong>
              <pre className="del">{shown(i.text_diff.before)}</pre>
              <pre className="add">{shown(i.text_diff.after)}</pre>
            </div>
          ) : null}
          <button
            type="button"
            disabled={busy}
            onClick={() => onReview({ instructions_consent: { hash: i.pending!.hash } })}
          >
            Approve its instructions
          </button>{' '}
          <button
            type="button"
            className="danger-outline"
            disabled={busy}
            onClick={() => onReview({ hide_instructions: true })}
          >
            Hide its instructions
          </button>
        </div>
      ) : (
        <pre>{shown(i.text)}</pre>
      )}
    </section>
  );
}
