import type { Queryable } from '../db/db.ts';

/** Held reservations past their time, oldest first (gatehouse_release closes each one once, whichever instance gets there first). */
export async function expiredReservations(q: Queryable, now: Date, max = 100): Promise<string[]> {
  return (
    await q.query<{ id: string }>(
      `SELECT id FROM usage_reservations WHERE status = 'held' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
      [now, max],
    )
  ).rows.map((r) => r.id);
}

/** Settled and released reservations closed before `before`: nothing reads them once their generation is over. */
export async function pruneClosedReservations(q: Queryable, before: Date): Promise<number> {
  return (await q.query(`DELETE FROM usage_reservations WHERE status <> 'held' AND closed_at < $1`, [before])).rowCount;
}
