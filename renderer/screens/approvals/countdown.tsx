import { useNow } from '../../lib/clock.ts';
import { formatCountdown, formatTime } from '../../lib/format.ts';

/** Time left until `expiresAt`; re-renders on the page's shared one-second tick, alone. */
export function Countdown({ expiresAt }: { expiresAt: string }) {
  const now = useNow();
  const left = Date.parse(expiresAt) - now;
  if (left <= 0) return <span className="countdown expired">expired</span>;
  return (
    <time
      className={`countdown${left < 60_000 ? ' soon' : ''}`}
      dateTime={expiresAt}
      title={`Expires at ${formatTime(expiresAt)}`}
    >
      {formatCountdown(left)} left
    </time>
  );
}
