import { useRef, useState } from 'react';
import type { Result, StagedView } from '../../../main/contract/index.ts';
import { LoadState } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { useApiEvents } from '../../lib/use-events.ts';
import { useLoad } from '../../lib/use-load.ts';
import { hashFocus, useHashFocus } from '../../lib/use-hash-route.ts';
import { DecisionHistory } from './history.tsx';
import { useApprovalKeys, useApprovalLists, useRowFocus, useStableRowActions, type Refusal } from './approval-hooks.ts';
import { PendingList } from './pending-list.tsx';
import { UnknownOutcomes } from './unknown-outcomes.tsx';

/** Put a changed payload into the list (replacing the one with its id), newest state wins. */
function upsert(list: StagedView[], item: StagedView): StagedView[] {
  const at = list.findIndex((x) => x.id === item.id);
  if (at === -1) return [...list, item];
  const next = list.slice();
  next[at] = item;
  return next;
}

function failureText(result: Extract<Result<unknown>, { ok: false }>): string {
  if (result.code === 'stale_preview')
    return 'Not applied: the target changed after this preview was made. Nothing was changed; ask the agent to stage it again.';
  if (result.code === 'stale_approval') return `Not applied: ${result.message}`;
  if (result.code === 'token_revoked' || result.code === 'token_narrowed') return `Not applied: ${result.message}`;
  if (result.code === 'staged_expired')
    return 'Not applied: this write expired before it was approved. Nothing was changed.';
  return `Not applied: ${result.message}`;
}

export function Approvals() {
  const api = useApi();
  const staged = useLoad(() => api['staged.list']({}), [api]);
  useApiEvents((event) => {
    if (event.type === 'staged') staged.update((list) => upsert(list, event.item));
    else if (event.type === 'health') staged.reload();
  });
  return (
    <LoadState state={staged.state} what="staged writes" onRetry={staged.reload}>
      {(all) => <ApprovalsBody all={all} update={staged.update} reload={staged.reload} />}
    </LoadState>
  );
}

function ApprovalsBody({
  all,
  update,
  reload,
}: {
  all: StagedView[];
  update: (f: (l: StagedView[]) => StagedView[]) => void;
  reload: () => void;
}) {
  const api = useApi();
  // A refused write stays in the list, where the person was looking, until they dismiss it.
  const [refused, setRefused] = useState<Readonly<Record<string, Refusal>>>({});
  const { pending, sameTarget, history } = useApprovalLists(all, refused);
  // `#approvals/stg_…` (a notification's click) selects that write.
  const [chosen, setChosen] = useState<string | null>(hashFocus);
  useHashFocus(setChosen);
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set());
  const [announcement, setAnnouncement] = useState('');
  const listRef = useRef<HTMLUListElement>(null);

  const selected = chosen !== null && pending.some((x) => x.id === chosen) ? chosen : (pending[0]?.id ?? null);
  const { focusWanted, move } = useRowFocus(pending, selected, setChosen);

  const decide = async (id: string, kind: 'approve' | 'discard') => {
    const item = pending.find((x) => x.id === id);
    if (!item || busy.has(id) || refused[id]) return;
    if (kind === 'approve' && (Date.parse(item.expires_at) <= Date.now() || item.blocked)) return;
    const at = pending.indexOf(item);
    setBusy((b) => new Set(b).add(id));
    // The approval names the preview this row showed: the service refuses it if the write changed since.
    const result =
      kind === 'approve'
        ? await api['staged.confirm']({ id, ...(item.preview_hash ? { preview_hash: item.preview_hash } : {}) })
        : await api['staged.discard']({ id });
    setBusy((b) => {
      const next = new Set(b);
      next.delete(id);
      return next;
    });
    if (result.ok) {
      const nextId = pending[at + 1]?.id ?? pending[at - 1]?.id ?? null;
      if (selected === id) setChosen(nextId);
      const focusedRow = document.activeElement?.closest('[data-id]')?.getAttribute('data-id');
      if (focusedRow === id) focusWanted.current = selected === id ? nextId : selected;
      update((list) => upsert(list, result.data));
      setAnnouncement(`${kind === 'approve' ? 'Approved' : 'Discarded'}: ${item.preview.summary}`);
    } else {
      const message = failureText(result);
      setRefused((r) => ({ ...r, [id]: { item, message } }));
      setAnnouncement(`Could not ${kind} ${item.tool}: ${message}`);
      if (['staged_expired', 'staged_already_decided', 'staged_not_found'].includes(result.code)) reload();
    }
  };

  const dismiss = (id: string) => {
    const at = pending.findIndex((x) => x.id === id);
    const nextId = pending[at + 1]?.id ?? pending[at - 1]?.id ?? null;
    if (selected === id) setChosen(nextId);
    focusWanted.current = nextId;
    setRefused(({ [id]: _gone, ...rest }) => rest);
  };

  const on = useStableRowActions(decide, dismiss, setChosen);

  useApprovalKeys(listRef, move, (kind) => {
    if (selected) void decide(selected, kind);
    return !!selected;
  });

  return (
    <div className="approvals">
      <section aria-labelledby="ap-pending">
        <div className="section-head">
          <h2 id="ap-pending">
            Waiting for you <span className="count">{pending.length}</span>
          </h2>
          <p className="shortcuts" id="ap-keys">
            Keys: <kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> move, <kbd>a</kbd> approve, <kbd>d</kbd>{' '}
            discard
          </p>
        </div>
        <p className="visually-hidden" role="status" aria-live="polite">
          {announcement}
        </p>
        <PendingList
          pending={pending}
          listRef={listRef}
          selected={selected}
          busy={busy}
          refused={refused}
          sameTarget={sameTarget}
          on={on}
        />
      </section>
      <UnknownOutcomes all={all} onSettled={(item) => update((list) => upsert(list, item))} />
      <DecisionHistory items={history} />
    </div>
  );
}
