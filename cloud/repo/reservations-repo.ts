import type { Queryable } from '../db/db.ts';
import type { CounterKey } from '../domain/usage-rules.ts';

export interface ReservationRow {
  id: string;
  site_id: string;
  metric: string;
  amount: number;
  counters: CounterKey[];
  status: 'held' | 'settled' | 'released';
  expires_at: string;
}

const COLS = 'id, site_id, metric, amount, counters, status, expires_at';

/** Closes a held reservation (settled or released) and answers it; null when it is not held any more (closed once, by one instance). */
export async function closeReservation(q: Queryable, id: string, status: 'settled' | 'released', now: Date): Promise<ReservationRow | null> {
  const r = await q.query<ReservationRow>(`UPDATE usage_reservations SET status = $2, closed_at = $3 WHERE id = $1 AND status = 'held' RETURNING ${COLS}`, [id, status, now]);
  return r.rows[0] ?? null;
}

/** Held reservations past their time, locked for this transaction (other instances skip them). */
export async function expiredReservations(q: Queryable, now: Date, max = 100): Promise<ReservationRow[]> {
  return (await q.query<ReservationRow>(`SELECT ${COLS} FROM usage_reservations WHERE status = 'held' AND expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`, [now, max])).rows;
}

/** Settled and released reservations closed before `before`: nothing reads them once their generation is over. */
export async function pruneClosedReservations(q: Queryable, before: Date): Promise<number> {
  return (await q.query(`DELETE FROM usage_reservations WHERE status <> 'held' AND closed_at < $1`, [before])).rowCount;
}
