import type { Queryable } from '../db/db.ts';

export interface AccountRow {
  id: string;
  name: string;
  created_at: string;
}

export interface LicenseRow {
  id: string;
  key_hash: string;
  key_preview: string;
  account_id: string;
  plan_id: string;
  site_limit: number | null;
  /** staging sites the license takes; null: as many as its production seats */
  staging_limit: number | null;
  status: 'active' | 'revoked';
  expires_at: string | null;
  created_at: string;
  revoked_at: string | null;
}

const LCOLS =
  'id, key_hash, key_preview, account_id, plan_id, site_limit, staging_limit, status, expires_at, created_at, revoked_at';

export async function insertAccount(q: Queryable, a: { id: string; name: string }, now: Date): Promise<void> {
  await q.query('INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)', [a.id, a.name, now]);
}

export async function accountById(q: Queryable, id: string): Promise<AccountRow | null> {
  return (await q.query<AccountRow>('SELECT id, name, created_at FROM accounts WHERE id = $1', [id])).rows[0] ?? null;
}

/**
 * Holds the account's row until the transaction ends: what serialises two
 * requests of one account that count something and then add to it (report
 * tasks, the account's own limits), on any instance. NO KEY UPDATE does not
 * block the foreign-key checks of rows that merely reference the account.
 */
export async function lockAccount(q: Queryable, accountId: string): Promise<void> {
  await q.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [accountId]);
}

export async function listAccounts(q: Queryable): Promise<Array<AccountRow & { licenses: number; sites: number }>> {
  return (
    await q.query<AccountRow & { licenses: number; sites: number }>(
      `SELECT a.id, a.name, a.created_at,
              (SELECT count(*)::int FROM licenses l WHERE l.account_id = a.id) AS licenses,
              (SELECT count(*)::int FROM sites s WHERE s.account_id = a.id AND s.status = 'active') AS sites
         FROM accounts a ORDER BY a.created_at, a.id`,
    )
  ).rows;
}

export async function insertLicense(
  q: Queryable,
  l: Omit<LicenseRow, 'created_at' | 'revoked_at' | 'status'>,
  now: Date,
): Promise<void> {
  await q.query(
    `INSERT INTO licenses (id, key_hash, key_preview, account_id, plan_id, site_limit, staging_limit, status, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 'active', $8, $9)`,
    [l.id, l.key_hash, l.key_preview, l.account_id, l.plan_id, l.site_limit, l.staging_limit, l.expires_at, now],
  );
}

export async function licenseByHash(
  q: Queryable,
  keyHash: string,
  opts: { lock?: boolean } = {},
): Promise<LicenseRow | null> {
  return (
    (
      await q.query<LicenseRow>(`SELECT ${LCOLS} FROM licenses WHERE key_hash = $1${opts.lock ? ' FOR UPDATE' : ''}`, [
        keyHash,
      ])
    ).rows[0] ?? null
  );
}

export async function licenseById(q: Queryable, id: string, opts: { lock?: boolean } = {}): Promise<LicenseRow | null> {
  return (
    (await q.query<LicenseRow>(`SELECT ${LCOLS} FROM licenses WHERE id = $1${opts.lock ? ' FOR UPDATE' : ''}`, [id]))
      .rows[0] ?? null
  );
}

export async function listLicenses(
  q: Queryable,
  accountId?: string,
): Promise<Array<LicenseRow & { sites_used: number; staging_used: number }>> {
  return (
    await q.query<LicenseRow & { sites_used: number; staging_used: number }>(
      `SELECT ${LCOLS.split(', ')
        .map((c) => `l.${c}`)
        .join(', ')},
              (SELECT count(*)::int FROM sites s WHERE s.license_id = l.id AND s.environment = 'production' AND s.status = 'active') AS sites_used,
              (SELECT count(*)::int FROM sites s WHERE s.license_id = l.id AND s.environment = 'staging' AND s.status = 'active') AS staging_used
         FROM licenses l ${accountId ? 'WHERE l.account_id = $1' : ''} ORDER BY l.created_at, l.id`,
      accountId ? [accountId] : [],
    )
  ).rows;
}

export async function revokeLicense(q: Queryable, id: string, now: Date): Promise<boolean> {
  return (
    (
      await q.query(`UPDATE licenses SET status = 'revoked', revoked_at = $2 WHERE id = $1 AND status = 'active'`, [
        id,
        now,
      ])
    ).rowCount > 0
  );
}

export async function setLicenseExpiry(q: Queryable, id: string, expiresAt: string | null): Promise<boolean> {
  return (await q.query('UPDATE licenses SET expires_at = $2 WHERE id = $1', [id, expiresAt])).rowCount > 0;
}
