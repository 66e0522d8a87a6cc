import { CERTIFICATE_TTL_SECONDS } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';
import type { KeySource, KeyStore } from '../crypto/master-key.ts';

export interface SigningKeyRow {
  kid: string;
  public_x: string;
  private_enc: string;
  created_at: string;
  retired_at: string | null;
  publish_until: string | null;
}

const COLS = 'kid, public_x, private_enc, created_at, retired_at, publish_until';

export async function activeKey(q: Queryable): Promise<SigningKeyRow | null> {
  return (await q.query<SigningKeyRow>(`SELECT ${COLS} FROM signing_keys WHERE retired_at IS NULL`)).rows[0] ?? null;
}

/** Keys a client may still meet on a certificate: the active one and retired ones until their last certificate expires. */
export async function publishedKeys(q: Queryable, now: Date): Promise<SigningKeyRow[]> {
  return (
    await q.query<SigningKeyRow>(
      `SELECT ${COLS} FROM signing_keys WHERE retired_at IS NULL OR publish_until > $1 ORDER BY created_at DESC, kid`,
      [now],
    )
  ).rows;
}

export async function allKeys(q: Queryable): Promise<SigningKeyRow[]> {
  return (await q.query<SigningKeyRow>(`SELECT ${COLS} FROM signing_keys ORDER BY created_at DESC, kid`)).rows;
}

/** Inserts a key as the active one; false when another instance made one first (the unique index allows one active key). */
export async function insertActiveKey(
  q: Queryable,
  k: Pick<SigningKeyRow, 'kid' | 'public_x' | 'private_enc'>,
  now: Date,
): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO signing_keys (kid, public_x, private_enc, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
    [k.kid, k.public_x, k.private_enc, now],
  );
  return r.rowCount > 0;
}

/** Retires the active key; it stays published as long as a certificate it signed can be valid. */
export async function retireActiveKey(q: Queryable, now: Date): Promise<string | null> {
  const until = new Date(now.getTime() + CERTIFICATE_TTL_SECONDS * 1000);
  const r = await q.query<{ kid: string }>(
    `UPDATE signing_keys SET retired_at = $1, publish_until = $2 WHERE retired_at IS NULL RETURNING kid`,
    [now, until],
  );
  return r.rows[0]?.kid ?? null;
}

export async function getSetting(q: Queryable, key: string): Promise<string | null> {
  return (
    (await q.query<{ value: string }>('SELECT value FROM cloud_settings WHERE key = $1', [key])).rows[0]?.value ?? null
  );
}

/** Sets the value unless one is there; answers the value that is there after. */
export async function putSettingOnce(q: Queryable, key: string, value: string): Promise<string> {
  await q.query('INSERT INTO cloud_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value]);
  return (await getSetting(q, key))!;
}

/** The database's record of its master key (a check value and where the key was), for loadMasterKey. */
export function masterKeyStore(q: Queryable): KeyStore {
  return {
    async record() {
      const source = await getSetting(q, 'master_key_source');
      return {
        check: await getSetting(q, 'master_key_check'),
        source: source ? (JSON.parse(source) as KeySource) : null,
      };
    },
    async claim(check, source) {
      // One statement: two instances setting a database up at once leave one key's check and place, never a mix.
      await q.query(
        `INSERT INTO cloud_settings (key, value) VALUES ('master_key_check', $1), ('master_key_source', $2) ON CONFLICT (key) DO NOTHING`,
        [check, JSON.stringify(source)],
      );
      return (await getSetting(q, 'master_key_check'))!;
    },
    async noteSource(source) {
      await putSettingOnce(q, 'master_key_source', JSON.stringify(source));
    },
  };
}
