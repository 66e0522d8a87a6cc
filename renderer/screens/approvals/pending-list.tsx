import type { RefObject } from 'react';
import { staleKeyOf, type StagedView } from '../../../main/contract/index.ts';
import { plural } from '../../lib/format.ts';
import { useUserNames } from '../../lib/use-user-names.ts';
import { ApprovalRow } from './approval-row.tsx';
import type { Refusal, RowActions } from './approval-hooks.ts';

/** The writes waiting for a decision, soonest to expire first. */
export function PendingList({
  pending,
  listRef,
  selected,
  busy,
  refused,
  sameTarget,
  on,
}: {
  pending: StagedView[];
  listRef: RefObject<HTMLUListElement | null>;
  selected: string | null;
  busy: ReadonlySet<string>;
  refused: Readonly<Record<string, Refusal>>;
  sameTarget: Map<string, number>;
  on: RowActions;
}) {
  const userName = useUserNames();
  return pending.length === 0 ? (
    <p className="empty">
      Nothing is waiting for approval. When an agent asks to change something, it shows up here at once.
    </p>
  ) : (
    <>
      <p className="muted">
        {plural(pending.length, 'staged write')}, soonest to expire first. Nothing changes until you approve.
      </p>
      <ul className="approval-list" ref={listRef} aria-labelledby="ap-pending" aria-describedby="ap-keys">
        {pending.map((item) => (
          <ApprovalRow
            key={item.id}
            item={item}
            userName={userName(item.user_id)}
            selected={item.id === selected}
            busy={busy.has(item.id)}
            refusal={refused[item.id]?.message}
            sameTarget={staleKeyOf(item) && !refused[item.id] ? (sameTarget.get(staleKeyOf(item)!) ?? 1) - 1 : 0}
            onSelect={on.onSelect}
            onApprove={on.onApprove}
            onDiscard={on.onDiscard}
            onDismiss={on.onDismiss}
          />
        ))}
      </ul>
    </>
  );
}
