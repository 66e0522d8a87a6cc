import { NONCE_TTL_SECONDS } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';

/**
 * Claims a nonce for a key: true the first time within the TTL, false for a
 * replay. The primary key decides between instances; an expired row is
 * taken over instead of blocking the nonce forever (migration 002's
 * gatehouse_claim_nonce).
 */
export async function claimNonce(q: Queryable, keyId: string, nonce: string, now: Date): Promise<boolean> {
  const expires = new Date(now.getTime() + NONCE_TTL_SECONDS * 1000);
  const r = await q.query<{ claimed: boolean }>('SELECT gatehouse_claim_nonce($1, $2, $3, $4) AS claimed', [keyId, nonce, expires, now]);
  return r.rows[0]?.claimed === true;
}

export async function pruneNonces(q: Queryable, now: Date): Promise<number> {
  return (await q.query('DELETE FROM request_nonces WHERE expires_at <= $1', [now])).rowCount;
}
