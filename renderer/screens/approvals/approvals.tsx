import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Result, StagedPayload } from '../../../main/contract/index.ts';
import { LoadState } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { plural } from '../../lib/format.ts';
import { useApiEvents } from '../../lib/use-events.ts';
import { useLoad } from '../../lib/use-load.ts';
import { useUserNames } from '../../lib/use-user-names.ts';
import { ApprovalRow } from './approval-row.tsx';
import { DecisionHistory } from './history.tsx';

const HISTORY_SIZE = 50;

/** Put a changed payload into the list (replacing the one with its id), newest state wins. */
function upsert(list: StagedPayload[], item: StagedPayload): StagedPayload[] {
  const at = list.findIndex((x) => x.id === item.id);
  if (at === -1) return [...list, item];
  const next = list.slice();
  next[at] = item;
  return next;
}

function failureText(result: Extract<Result<unknown>, { ok: false }>): string {
  if (result.code === 'stale_preview') return 'Not applied: the target changed after this preview was made. Nothing was changed; ask the agent to stage it again.';
  if (result.code === 'staged_expired') return 'Not applied: this write expired before it was approved. Nothing was changed.';
  return `Not applied: ${result.message}`;
}

interface Refusal {
  /** the row as it was when the person acted on it */
  item: StagedPayload;
  message: string;
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

function ApprovalsBody({ all, update, reload }: { all: StagedPayload[]; update: (f: (l: StagedPayload[]) => StagedPayload[]) => void; reload: () => void }) {
  const api = useApi();
  const userName = useUserNames();
  // A refused write stays in the list, where the person was looking, until they dismiss it.
  const [refused, setRefused] = useState<Readonly<Record<string, Refusal>>>({});
  const pending = useMemo(() => {
    const live = all.filter((x) => x.status === 'pending' && !refused[x.id]);
    return [...live, ...Object.values(refused).map((r) => r.item)].sort((a, b) => a.expires_at.localeCompare(b.expires_at) || a.id.localeCompare(b.id));
  }, [all, refused]);
  const sameTarget = useMemo(() => {
    const counts = new Map<string, number>();
    for (const x of pending) if (x.target && !refused[x.id]) counts.set(x.target, (counts.get(x.target) ?? 0) + 1);
    return counts;
  }, [pending, refused]);
  const history = useMemo(
    () =>
      all
        .filter((x) => x.status !== 'pending' && !refused[x.id])
        .sort((a, b) => (b.decided_at ?? b.expires_at).localeCompare(a.decided_at ?? a.expires_at))
        .slice(0, HISTORY_SIZE),
    [all, refused],
  );
  const [chosen, setChosen] = useState<string | null>(null);
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set());
  const [announcement, setAnnouncement] = useState('');
  /** Row whose title gets focus after the next render (keyboard moves, or the focused row went away). */
  const focusWanted = useRef<string | null>(null);
  const listRef = useRef<HTMLUListElement>(null);

  const selected = chosen !== null && pending.some((x) => x.id === chosen) ? chosen : (pending[0]?.id ?? null);

  const decide = async (id: string, kind: 'approve' | 'discard') => {
    const item = pending.find((x) => x.id === id);
    if (!item || busy.has(id) || refused[id]) return;
    if (kind === 'approve' && Date.parse(item.expires_at) <= Date.now()) return;
    const at = pending.indexOf(item);
    setBusy((b) => new Set(b).add(id));
    const result = kind === 'approve' ? await api['staged.confirm']({ id }) : await api['staged.discard']({ id });
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

  // Rows get callbacks that never change, so memo() keeps untouched rows as they are.
  const decideRef = useRef(decide);
  decideRef.current = decide;
  const onApprove = useCallback((id: string) => void decideRef.current(id, 'approve'), []);
  const onDiscard = useCallback((id: string) => void decideRef.current(id, 'discard'), []);
  const onSelect = useCallback((id: string) => setChosen((c) => (c === id ? c : id)), []);
  const dismissRef = useRef(dismiss);
  dismissRef.current = dismiss;
  const onDismiss = useCallback((id: string) => dismissRef.current(id), []);

  const move = (step: number) => {
    if (pending.length === 0) return;
    const at = Math.max(0, pending.findIndex((x) => x.id === selected));
    const next = pending[Math.min(pending.length - 1, Math.max(0, at + step))];
    if (next) {
      focusWanted.current = next.id;
      setChosen(next.id);
    }
  };

  useEffect(() => {
    const id = focusWanted.current;
    if (!id) return;
    focusWanted.current = null;
    document.getElementById(`staged-${id}-title`)?.focus();
  });

  const keysRef = useRef<(e: KeyboardEvent) => void>(() => {});
  keysRef.current = (e: KeyboardEvent) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target instanceof Element ? e.target : null;
    if (target?.closest('input, textarea, select, [contenteditable="true"], .confirm')) return;
    const inList = !!target && !!listRef.current?.contains(target);
    const key = e.key;
    if (key === 'j' || (key === 'ArrowDown' && inList)) move(1);
    else if (key === 'k' || (key === 'ArrowUp' && inList)) move(-1);
    else if ((key === 'a' || key === 'd') && selected) {
      void decide(selected, key === 'a' ? 'approve' : 'discard');
    } else return;
    e.preventDefault();
  };
  useEffect(() => {
    const listener = (e: KeyboardEvent) => keysRef.current(e);
    window.addEventListener('keydown', listener);
    return () => window.removeEventListener('keydown', listener);
  }, []);

  return (
    <div className="approvals">
      <section aria-labelledby="ap-pending">
        <div className="section-head">
          <h2 id="ap-pending">
            Waiting for you <span className="count">{pending.length}</span>
          </h2>
          <p className="shortcuts" id="ap-keys">
            Keys: <kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> move, <kbd>a</kbd> approve, <kbd>d</kbd> discard
          </p>
        </div>
        <p className="visually-hidden" role="status" aria-live="polite">
          {announcement}
        </p>
        {pending.length === 0 ? (
          <p className="empty">Nothing is waiting for approval. When an agent asks to change something, it shows up here at once.</p>
        ) : (
          <>
            <p className="muted">{plural(pending.length, 'staged write')}, soonest to expire first. Nothing changes until you approve.</p>
            <ul className="approval-list" ref={listRef} aria-labelledby="ap-pending" aria-describedby="ap-keys">
              {pending.map((item) => (
                <ApprovalRow
                  key={item.id}
                  item={item}
                  userName={userName(item.user_id)}
                  selected={item.id === selected}
                  busy={busy.has(item.id)}
                  refusal={refused[item.id]?.message}
                  sameTarget={item.target && !refused[item.id] ? (sameTarget.get(item.target) ?? 1) - 1 : 0}
                  onSelect={onSelect}
                  onApprove={onApprove}
                  onDiscard={onDiscard}
                  onDismiss={onDismiss}
                />
              ))}
            </ul>
          </>
        )}
      </section>
      <DecisionHistory items={history} />
    </div>
  );
}
