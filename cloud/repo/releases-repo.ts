import type { ReleaseManifest, SignedManifest } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';

/** A published release: its manifest (what was signed) and the signed envelope, per product, channel and version. */
export interface ReleaseRow {
  id: string;
  product: string;
  channel: string;
  version: string;
  manifest: ReleaseManifest;
  signed: SignedManifest;
  published_at: string;
  updated_at: string;
}

const COLS = 'id, product, channel, version, manifest, signed, published_at, updated_at';

/** Inserts, or replaces the manifest of the same product, channel and version (a widened rollout); answers the row. */
export async function upsertRelease(
  q: Queryable,
  r: Omit<ReleaseRow, 'published_at' | 'updated_at'>,
  now: Date,
): Promise<ReleaseRow> {
  const out = await q.query<ReleaseRow>(
    `INSERT INTO releases (id, product, channel, version, manifest, signed, published_at, updated_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $7)
     ON CONFLICT (product, channel, version) DO UPDATE SET manifest = EXCLUDED.manifest, signed = EXCLUDED.signed, updated_at = EXCLUDED.updated_at
     RETURNING ${COLS}`,
    [r.id, r.product, r.channel, r.version, JSON.stringify(r.manifest), JSON.stringify(r.signed), now],
  );
  return out.rows[0]!;
}

export async function releaseOf(
  q: Queryable,
  product: string,
  channel: string,
  version: string,
  opts: { lock?: boolean } = {},
): Promise<ReleaseRow | null> {
  return (
    (
      await q.query<ReleaseRow>(
        `SELECT ${COLS} FROM releases WHERE product = $1 AND channel = $2 AND version = $3${opts.lock ? ' FOR UPDATE' : ''}`,
        [product, channel, version],
      )
    ).rows[0] ?? null
  );
}

/** Every release of a product on a channel (an operator publishes tens, not millions). */
export async function releasesOf(q: Queryable, product: string, channel: string): Promise<ReleaseRow[]> {
  return (
    await q.query<ReleaseRow>(`SELECT ${COLS} FROM releases WHERE product = $1 AND channel = $2`, [product, channel])
  ).rows;
}

/** A product's releases of one version, in any channel (updates/verify without a manifest). */
export async function releasesOfVersion(q: Queryable, product: string, version: string): Promise<ReleaseRow[]> {
  return (
    await q.query<ReleaseRow>(
      `SELECT ${COLS} FROM releases WHERE product = $1 AND version = $2 ORDER BY published_at`,
      [product, version],
    )
  ).rows;
}

export async function listReleases(
  q: Queryable,
  f: { product?: string; channel?: string } = {},
): Promise<ReleaseRow[]> {
  return (
    await q.query<ReleaseRow>(
      `SELECT ${COLS} FROM releases WHERE ($1::text IS NULL OR product = $1) AND ($2::text IS NULL OR channel = $2) ORDER BY product, channel, published_at DESC`,
      [f.product ?? null, f.channel ?? null],
    )
  ).rows;
}
