import { randomBytes } from 'node:crypto';
import type { RegisterBody, SiteInfo, SyncBody } from '../../main/contract/cloud/index.ts';
import { shortId } from '../../main/lib/ids.ts';
import { newSecret } from '../crypto/hash.ts';
import { CloudError } from '../errors.ts';
import { disconnectSite, insertSite, recordSync, siteById, type SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import { issueCertificate, licenseView, loadGrants, supportOf, type SiteGrants } from './grants-service.ts';
import { sealSiteSecret } from './auth-service.ts';
import type { Queryable } from '../db/db.ts';

/** sites/register: a new identity; the secret is in this answer only and stored sealed. */
export async function registerSite(ctx: Ctx, body: RegisterBody) {
  const id = shortId('site', 12);
  const keyId = `key_${randomBytes(12).toString('base64url')}`;
  const secret = newSecret('ghs_', 32);
  await insertSite(
    ctx.db,
    {
      id,
      key_id: keyId,
      secret_enc: sealSiteSecret(ctx, id, secret),
      url: body.url,
      name: body.name ?? null,
      environment: body.environment,
    },
    ctx.now(),
  );
  ctx.log.info('site registered', { site_id: id, environment: body.environment });
  return { success: true as const, site_id: id, key_id: keyId, secret, environment: body.environment };
}

export async function siteInfo(q: Queryable, g: SiteGrants): Promise<SiteInfo> {
  const s = g.site;
  const lv = await licenseView(q, g);
  return {
    site_id: s.id,
    url: s.url,
    name: s.name,
    environment: s.environment,
    status: s.status,
    account_id: s.account_id,
    license: { status: lv.status, plan: lv.plan, key_preview: lv.key_preview, expires_at: lv.license_expires_at },
    version: s.version,
    products_in_use: s.products_in_use,
    outbox_depth: s.outbox_depth,
    last_sync_at: s.last_sync_at,
    registered_at: s.created_at,
    support_priority: supportOf(g).support_priority,
  };
}

export async function siteStatus(ctx: Ctx, site: SiteRow) {
  const now = ctx.now();
  return {
    success: true as const,
    site: await siteInfo(ctx.db, await loadGrants(ctx.db, site, now)),
    server_time: now.toISOString(),
  };
}

/** sites/sync: the site reports itself and gets its current certificate. */
export async function syncSite(ctx: Ctx, site: SiteRow, body: SyncBody) {
  const now = ctx.now();
  await recordSync(ctx.db, site.id, body, now);
  const fresh = (await siteById(ctx.db, site.id))!;
  const g = await loadGrants(ctx.db, fresh, now);
  const { certificate } = await issueCertificate(ctx, ctx.db, g);
  return { success: true as const, site: await siteInfo(ctx.db, g), certificate, server_time: now.toISOString() };
}

/** sites/disconnect: the key stops working at once and the license seat is freed. */
export async function disconnect(ctx: Pick<Ctx, 'db' | 'now' | 'log'>, siteId: string) {
  const done = await disconnectSite(ctx.db, siteId, ctx.now());
  if (!done && !(await siteById(ctx.db, siteId))) throw new CloudError('not_found', `no site '${siteId}'`);
  ctx.log.info('site disconnected', { site_id: siteId });
  return { success: true as const, site_id: siteId, status: 'disconnected' as const };
}
