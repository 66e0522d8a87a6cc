import type { CloudProduct, Environment } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';
import type { PlanDef } from '../domain/plans.ts';
import type { LicenseRow } from './licenses-repo.ts';

/** What the auth query reads with the site, so a request needs no second read for its grants. */
export interface GrantsSnapshot {
  /** the fields the hot path reads (not key_hash, created_at, revoked_at) */
  license: LicenseRow | null;
  plan: PlanDef | null;
  off: Set<CloudProduct>;
  /** features the account switched off for all its sites */
  featuresOff: Set<string>;
  /** the account's support priority, when its policy sets one (else the plan's) */
  accountPriority: string | null;
  /** configuration versions as of this request (config_versions): what an instance may keep until they move */
  config: Record<string, number>;
}

export interface SiteRow {
  id: string;
  key_id: string;
  secret_enc: string | null;
  url: string;
  name: string | null;
  environment: Environment;
  status: 'active' | 'disconnected';
  license_id: string | null;
  account_id: string | null;
  department: string | null;
  project: string | null;
  version: string | null;
  products_in_use: CloudProduct[];
  outbox_depth: number | null;
  last_sync_at: string | null;
  created_at: string;
  disconnected_at: string | null;
  /** set by authenticateKey: the license, plan and product switches as of this request */
  snapshot?: GrantsSnapshot;
  /** set by authenticateKey when the route claims the request's nonce itself, in its own statement */
  nonce?: DeferredNonce;
}

/** A request's nonce left to its route (gatehouse_hold, gatehouse_record), so that one commit does both. */
export interface DeferredNonce {
  key_id: string;
  nonce: string;
  expires: Date;
  claimed: boolean;
}

/** How authentication claims the nonce: now and durably, now without waiting for the commit to be durable (read-only routes), or later by the route. */
export type NonceClaim = 'durable' | 'relaxed' | 'deferred';

const COLS =
  'id, key_id, secret_enc, url, name, environment, status, license_id, account_id, department, project, version, products_in_use, outbox_depth, last_sync_at, created_at, disconnected_at';

export async function insertSite(
  q: Queryable,
  s: Pick<SiteRow, 'id' | 'key_id' | 'secret_enc' | 'url' | 'name' | 'environment'>,
  now: Date,
): Promise<void> {
  await q.query(
    `INSERT INTO sites (id, key_id, secret_enc, url, name, environment, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, 'active', $7)`,
    [s.id, s.key_id, s.secret_enc, s.url, s.name, s.environment, now],
  );
}

export async function siteById(q: Queryable, id: string, opts: { lock?: boolean } = {}): Promise<SiteRow | null> {
  return (
    (await q.query<SiteRow>(`SELECT ${COLS} FROM sites WHERE id = $1${opts.lock ? ' FOR UPDATE' : ''}`, [id]))
      .rows[0] ?? null
  );
}

export async function listSites(
  q: Queryable,
  f: { account_id?: string; license_id?: string; status?: string } = {},
): Promise<SiteRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const [k, v] of Object.entries(f)) {
    if (v === undefined) continue;
    params.push(v);
    where.push(`${k} = $${params.length}`);
  }
  return (
    await q.query<SiteRow>(
      `SELECT ${COLS} FROM sites ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at, id`,
      params,
    )
  ).rows;
}

/** Disconnecting wipes the secret (the key can never verify again) and frees the license seat. */
export async function disconnectSite(q: Queryable, id: string, now: Date): Promise<boolean> {
  const r = await q.query(
    `UPDATE sites SET status = 'disconnected', secret_enc = NULL, license_id = NULL, disconnected_at = $2 WHERE id = $1 AND status = 'active'`,
    [id, now],
  );
  return r.rowCount > 0;
}

export async function recordSync(
  q: Queryable,
  id: string,
  s: { version: string; products_in_use: CloudProduct[]; outbox_depth: number },
  now: Date,
): Promise<void> {
  await q.query(
    `UPDATE sites SET version = $2, products_in_use = $3::jsonb, outbox_depth = $4, last_sync_at = $5 WHERE id = $1`,
    [id, s.version, JSON.stringify(s.products_in_use), s.outbox_depth, now],
  );
}

export async function bindLicense(
  q: Queryable,
  siteId: string,
  licenseId: string | null,
  accountId: string | null,
): Promise<void> {
  await q.query(`UPDATE sites SET license_id = $2, account_id = COALESCE($3, account_id) WHERE id = $1`, [
    siteId,
    licenseId,
    accountId,
  ]);
}

export async function assignSite(
  q: Queryable,
  id: string,
  f: { department?: string | null; project?: string | null },
): Promise<boolean> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  for (const k of ['department', 'project'] as const) {
    if (f[k] === undefined) continue;
    params.push(f[k]);
    sets.push(`${k} = $${params.length}`);
  }
  if (!sets.length) return true;
  return (await q.query(`UPDATE sites SET ${sets.join(', ')} WHERE id = $1`, params)).rowCount > 0;
}

/** Connected sites of one environment on the license: production ones hold its seats, staging ones count against its staging cap. */
export async function seatsUsed(
  q: Queryable,
  licenseId: string,
  exceptSite?: string,
  environment: Environment = 'production',
): Promise<number> {
  const r = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM sites WHERE license_id = $1 AND environment = $3 AND status = 'active' AND id <> $2`,
    [licenseId, exceptSite ?? '', environment],
  );
  return r.rows[0]!.n;
}

/**
 * The hot path of every signed request, in one round trip (migration 003's
 * gatehouse_authenticate): the site with its license, switched-off products,
 * the account's policy bits and the configuration versions, and the nonce
 * claimed for the key (`nonce_fresh` false: a replay). The nonce is claimed
 * only for a known, connected site; the caller still refuses the request
 * unless the signature verifies. `planOf` answers the license's plan (the
 * caller keeps plans while their version holds). `claim` says how the nonce
 * is claimed (see NonceClaim; 'deferred' leaves `site.nonce` to the route,
 * which must claim it before it acts). Nothing else is kept: a
 * disconnect, a revoke or a plan change holds at the next request on any
 * instance.
 */
export async function authenticateKey(
  q: Queryable,
  keyId: string,
  nonce: string,
  nonceExpires: Date,
  now: Date,
  planOf: (planId: string, version: number | undefined) => Promise<PlanDef | null>,
  claim: NonceClaim = 'durable',
): Promise<(SiteRow & { nonce_fresh: boolean }) | null> {
  const r = await q.query<Record<string, unknown>>('SELECT * FROM gatehouse_authenticate($1, $2, $3, $4, $5, $6)', [
    keyId,
    nonce,
    nonceExpires,
    now,
    claim !== 'deferred',
    claim === 'durable',
  ]);
  const row = r.rows[0];
  if (!row) return null;
  const config = (row.config as Record<string, number> | null) ?? {};
  const site = {
    id: row.id,
    key_id: row.key_id,
    secret_enc: row.secret_enc,
    url: row.url,
    name: row.name,
    environment: row.environment,
    status: row.status,
    license_id: row.license_id,
    account_id: row.account_id,
    department: row.department,
    project: row.project,
    version: row.version,
    products_in_use: row.products_in_use,
    outbox_depth: row.outbox_depth,
    last_sync_at: row.last_sync_at,
    created_at: row.created_at,
    disconnected_at: null,
    nonce_fresh: claim === 'deferred' ? true : row.nonce_fresh,
    ...(claim === 'deferred' ? { nonce: { key_id: keyId, nonce, expires: nonceExpires, claimed: false } } : {}),
  } as SiteRow & { nonce_fresh: boolean };
  const license = row.l_id
    ? ({
        id: row.l_id,
        key_preview: row.l_key_preview,
        account_id: row.l_account_id,
        plan_id: row.l_plan_id,
        site_limit: row.l_site_limit,
        status: row.l_status,
        expires_at: row.l_expires_at,
      } as LicenseRow)
    : null;
  const plan = license ? await planOf(license.plan_id, config.plans) : null;
  site.snapshot = {
    license,
    plan,
    off: new Set(row.off as CloudProduct[]),
    featuresOff: new Set((row.a_features_off as string[] | null) ?? []),
    accountPriority: (row.a_support_priority as string | null) ?? null,
    config,
  };
  return site;
}
