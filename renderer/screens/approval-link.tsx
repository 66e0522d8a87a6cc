import { useEffect, useState } from 'react';
import type { ApprovalView, Result } from '../../main/contract/index.ts';
import { shown } from '../../main/contract/index.ts';
import { useConsole } from '../lib/console-context.tsx';
import { formatTime } from '../lib/format.ts';
import { Countdown } from './approvals/countdown.tsx';
import { PreviewView } from './approvals/preview-view.tsx';

type State =
  | { kind: 'loading' }
  | { kind: 'shown'; view: ApprovalView; busy: boolean; refusal: string | null }
  | { kind: 'refused'; text: string };

const DECIDED: Partial<Record<ApprovalView['status'], string>> = {
  // A link reaches clients with and without tasks (docs/tasks.md): the page cannot tell which, so it names both ways.
  confirmed:
    'Approved and applied. The agent gets the result from its task if its client asked for one, or with staged_writes_status.',
  discarded: 'Discarded: nothing was changed.',
};

function refusalText(r: Extract<Result<unknown>, { ok: false }>): string {
  if (r.code === 'approval_link_gone' || r.code === 'staged_expired')
    return 'This approval link is no longer valid: its write was already decided, or it expired. Nothing more can be done here.';
  if (r.code === 'not_found') return 'No staged write has this approval link.';
  if (r.code === 'stale_preview')
    return 'Not applied: the target changed after this preview was made. Nothing was changed; ask the agent to stage it again.';
  if (r.code === 'stale_approval')
    return 'Not applied: this write changed since this page showed it. Nothing was changed; reload the page to see it as it is now.';
  if (r.code === 'token_revoked')
    return 'Not applied: the token that staged this write was revoked, so it was discarded.';
  if (r.code === 'token_narrowed')
    return 'This write cannot be approved: the token that staged it may not make it any more. You can discard it.';
  if (r.code === 'policy_denied') return `This write cannot be approved now: ${r.message}. You can discard it.`;
  return r.message;
}

const BLOCKED: Record<NonNullable<ApprovalView['blocked']>, string> = {
  token_revoked: 'The token that staged this write was revoked: it cannot be approved.',
  token_narrowed:
    "The token that staged this write may not make it any more (its profile, scope or user's role changed): it cannot be approved. You can discard it.",
  policy_denied:
    'The policy in force now forbids this call: it cannot be approved. You can discard it (or a person can change the policy).',
};

/**
 * The page of one approval link (`#approve/<link>`): that write only, with
 * Approve and Discard, for a person with a console session. Without one it
 * sends the browser to sign in (the login returns here).
 */
export function ApprovalLinkPage({ link }: { link: string }) {
  const { api, mode } = useConsole();
  const [state, setState] = useState<State>({ kind: 'loading' });

  const refused = (r: Extract<Result<unknown>, { ok: false }>) => {
    if (r.code === 'unauthorized' && mode === 'browser')
      return void window.location.assign(`login?next=${encodeURIComponent(link)}`);
    setState({ kind: 'refused', text: refusalText(r) });
  };

  useEffect(() => {
    document.title = 'Approve a write · Gatehouse';
    void api['approval.get']({ link }).then((r) =>
      r.ok ? setState({ kind: 'shown', view: r.data, busy: false, refusal: null }) : refused(r),
    );
  }, [api, link]);

  const decide = async (view: ApprovalView, verb: 'approval.confirm' | 'approval.discard') => {
    setState({ kind: 'shown', view, busy: true, refusal: null });
    // Approve names the preview shown here: a write that changed since is refused as stale, never applied unseen.
    const r =
      verb === 'approval.confirm'
        ? await api[verb]({ link, ...(view.preview_hash ? { preview_hash: view.preview_hash } : {}) })
        : await api[verb]({ link });
    if (r.ok) setState({ kind: 'shown', view: r.data, busy: false, refusal: null });
    else if (r.code === 'unauthorized') refused(r);
    else setState({ kind: 'shown', view, busy: false, refusal: refusalText(r) });
  };

  if (state.kind === 'loading') return <p className="muted">Loading the write…</p>;
  if (state.kind === 'refused')
    return (
      <div className="banner" role="alert">
        {state.text}
      </div>
    );
  const { view, busy, refusal } = state;
  const done = DECIDED[view.status];
  return (
    <section className="card" aria-labelledby="approval-link-title">
      <h2 id="approval-link-title">{shown(view.preview.summary)}</h2>
      <p className="approval-meta">
        <span className="tool">{shown(view.tool)}</span>
        {view.target ? <> on {shown(view.target)}</> : null}
        {view.client ? <> · asked by {shown(view.client)}</> : null}
        {view.token_label ? <> (token {shown(view.token_label)})</> : null} · staged {formatTime(view.created)} ·{' '}
        {done ? null : (
          <>
            expires {formatTime(view.expires_at)} (<Countdown expiresAt={view.expires_at} />)
          </>
        )}
      </p>
      <PreviewView preview={view.preview} idBase="approval-link" />
      {refusal ? (
        <div className="row-error" role="alert">
          {refusal}
        </div>
      ) : null}
      {!done && view.blocked ? (
        <div className="row-error" role="alert">
          {BLOCKED[view.blocked]}
          {view.blocked === 'policy_denied' && view.blocked_reason ? ` Why: ${view.blocked_reason}.` : ''}
        </div>
      ) : null}
      {done ? (
        <p role="status">{done}</p>
      ) : (
        <div className="form-buttons">
          {view.blocked ? null : (
            <button
              type="button"
              className="primary"
              disabled={busy}
              onClick={() => void decide(view, 'approval.confirm')}
            >
              Approve
            </button>
          )}
          <button type="button" disabled={busy} onClick={() => void decide(view, 'approval.discard')}>
            Discard
          </button>
        </div>
      )}
    </section>
  );
}
