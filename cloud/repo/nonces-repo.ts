import { NONCE_TTL_SECONDS } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';

/**
 * Claims a nonce for a key: true the first time within the TTL, false for a
 * replay. The primary key decides between instances; an expired row is
 * taken over instead of blocking the nonce forever.
 */
export async function claimNonce(q: Queryable, keyId: string, nonce: string, now: Date): Promise<boolean> {
  const expires = new Date(now.getTime() + NONCE_TTL_SECONDS * 1000);
  const r = await q.query(
    `INSERT INTO request_nonces (key_id, nonce, expires_at) VALUES ($1, $2, $3)
     ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE request_nonces.expires_at <= $4
     RETURNING 1`,
    [keyId, nonce, expires, now],
  );
  return r.rows.length > 0;
}

export async function pruneNonces(q: Queryable, now: Date): Promise<number> {
  return (await q.query('DELETE FROM request_nonces WHERE expires_at <= $1', [now])).rowCount;
}
