import { useNow } from '../lib/clock.ts';
import { formatDateTime, formatRelative } from '../lib/format.ts';

/**
 * A table cell reading "3 min ago" (the exact time on hover). It follows the
 * shared clock tick by itself, so the table around it does not re-render
 * every second.
 */
export function TimeAgoCell({ at }: { at: string | null | undefined }) {
  const now = useNow();
  return <td title={formatDateTime(at)}>{formatRelative(at, now)}</td>;
}
