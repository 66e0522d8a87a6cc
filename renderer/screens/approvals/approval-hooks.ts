import { useCallback, useEffect, useMemo, useRef, type RefObject } from 'react';
import { staleKeyOf, type StagedView } from '../../../main/contract/index.ts';

// The Approvals screen's hooks: what it lists, which row has focus, its keys and its rows' callbacks.

const HISTORY_SIZE = 50;

export interface RowActions {
  onSelect: (id: string) => void;
  onApprove: (id: string) => void;
  onDiscard: (id: string) => void;
  onDismiss: (id: string) => void;
}

export interface Refusal {
  /** the row as it was when the person acted on it */
  item: StagedView;
  message: string;
}

/** What the Approvals screen shows of the staged writes: the open ones (refused rows kept in place), how many share a target, and recent decisions. */
export function useApprovalLists(all: StagedView[], refused: Readonly<Record<string, Refusal>>) {
  const pending = useMemo(() => {
    const live = all.filter((x) => x.status === 'pending' && !refused[x.id]);
    return [...live, ...Object.values(refused).map((r) => r.item)].sort(
      (a, b) => a.expires_at.localeCompare(b.expires_at) || a.id.localeCompare(b.id),
    );
  }, [all, refused]);
  // Only writes bound to what their target is now go stale when another write to it is applied (a page's
  // target_version, an upstream file as its preview read it: staleKeyOf); for any other write approving one changes
  // nothing for the others and the desk must not say it does.
  const sameTarget = useMemo(() => {
    const counts = new Map<string, number>();
    for (const x of pending) {
      const key = refused[x.id] ? null : staleKeyOf(x);
      if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
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
  return { pending, sameTarget, history };
}

/**
 * The screen's keys, on the window: j/k or the arrows (inside the list) move,
 * a approves and d discards the selected row; never while typing or confirming.
 */
export function useApprovalKeys(
  listRef: RefObject<HTMLUListElement | null>,
  move: (step: number) => void,
  decide: (kind: 'approve' | 'discard') => boolean,
): void {
  const keysRef = useRef<(e: KeyboardEvent) => void>(() => {});
  keysRef.current = (e: KeyboardEvent) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target instanceof Element ? e.target : null;
    if (target?.closest('input, textarea, select, [contenteditable="true"], .confirm')) return;
    const inList = !!target && !!listRef.current?.contains(target);
    const key = e.key;
    if (key === 'j' || (key === 'ArrowDown' && inList)) move(1);
    else if (key === 'k' || (key === 'ArrowUp' && inList)) move(-1);
    else if (!((key === 'a' || key === 'd') && decide(key === 'a' ? 'approve' : 'discard'))) return;
    e.preventDefault();
  };
  useEffect(() => {
    const listener = (e: KeyboardEvent) => keysRef.current(e);
    window.addEventListener('keydown', listener);
    return () => window.removeEventListener('keydown', listener);
  }, []);
}

/** Moving the selection, and the row whose title gets focus after the next render (keyboard moves, or the focused row went away). */
export function useRowFocus(pending: StagedView[], selected: string | null, setChosen: (id: string) => void) {
  const focusWanted = useRef<string | null>(null);
  const move = (step: number) => {
    if (pending.length === 0) return;
    const at = Math.max(
      0,
      pending.findIndex((x) => x.id === selected),
    );
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

  return { focusWanted, move };
}

/** Rows get callbacks that never change, so memo() keeps untouched rows as they are. */
export function useStableRowActions(
  decide: (id: string, kind: 'approve' | 'discard') => Promise<void>,
  dismiss: (id: string) => void,
  setChosen: (f: (c: string | null) => string | null) => void,
): RowActions {
  const decideRef = useRef(decide);
  decideRef.current = decide;
  const dismissRef = useRef(dismiss);
  dismissRef.current = dismiss;
  const onApprove = useCallback((id: string) => void decideRef.current(id, 'approve'), []);
  const onDiscard = useCallback((id: string) => void decideRef.current(id, 'discard'), []);
  const onSelect = useCallback((id: string) => setChosen((c) => (c === id ? c : id)), [setChosen]);
  const onDismiss = useCallback((id: string) => dismissRef.current(id), []);
  return useMemo(() => ({ onSelect, onApprove, onDiscard, onDismiss }), [onSelect, onApprove, onDiscard, onDismiss]);
}
