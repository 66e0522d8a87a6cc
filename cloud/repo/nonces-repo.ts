import type { Queryable } from '../db/db.ts';

/**
 * Nonces are claimed by gatehouse_authenticate (migration 002) in the same
 * round trip that reads the site; the primary key (key_id, nonce) decides
 * between instances. Expired rows are taken over by a new claim and pruned
 * here by any instance's housekeeping.
 */
export async function pruneNonces(q: Queryable, now: Date): Promise<number> {
  return (await q.query('DELETE FROM request_nonces WHERE expires_at <= $1', [now])).rowCount;
}
