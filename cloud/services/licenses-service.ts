import type { LicenseStatus } from '../../main/contract/cloud/index.ts';
import { sha256Hex } from '../crypto/hash.ts';
import { CloudError } from '../errors.ts';
import { licenseStatus } from '../domain/grants.ts';
import { stagingCap } from '../domain/staging.ts';
import { listPlans } from '../repo/catalog-repo.ts';
import { licenseByHash } from '../repo/licenses-repo.ts';
import { bindLicense, seatsUsed, siteById, type SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import { issueCertificate, licenseView, loadGrants } from './grants-service.ts';

export const hashLicenseKey = (key: string): string => sha256Hex(key);

async function answer(ctx: Ctx, siteId: string) {
  const now = ctx.now();
  const g = await loadGrants(ctx.db, (await siteById(ctx.db, siteId))!, now);
  const { certificate, cert_expires_at } = await issueCertificate(ctx, ctx.db, g);
  return { g, body: { success: true as const, license: await licenseView(ctx.db, g), certificate, cert_expires_at } };
}

const refusal = (status: LicenseStatus, details: Record<string, unknown>) =>
  status === 'expired'
    ? new CloudError('license_expired', 'the license has expired: renew it, or activate another license', details)
    : new CloudError(
        'license_invalid',
        'no valid license is activated on this site: activate one with license/activate',
        details,
      );

/**
 * license/activate: binds the license to the site. The license row is locked
 * for the transaction, so two sites activating the last seat at once on two
 * instances cannot both get it. Staging sites take no production seat but
 * count against the license's staging cap (domain/staging.ts).
 */
export async function activate(ctx: Ctx, site: SiteRow, licenseKey: string) {
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    const license = await licenseByHash(tx, hashLicenseKey(licenseKey), { lock: true });
    if (!license || license.status === 'revoked')
      throw new CloudError(
        'license_invalid',
        license ? 'this license was revoked: contact the vendor' : 'no license has this key: check it for typos',
      );
    if (licenseStatus(license, now) === 'expired')
      throw new CloudError('license_expired', `this license expired at ${license.expires_at}: renew it`, {
        license_expires_at: license.expires_at,
      });
    const current = await siteById(tx, site.id, { lock: true });
    if (!current || current.status !== 'active')
      throw new CloudError('invalid_site', 'this site was disconnected', {}, { status: 403 });
    if (current.license_id === license.id) return;
    const plan = (await listPlans(tx)).find((p) => p.id === license.plan_id);
    const used = await seatsUsed(tx, license.id, site.id, current.environment);
    if (current.environment === 'production') {
      const limit = license.site_limit ?? plan?.site_limit ?? 0;
      if (used >= limit) {
        throw new CloudError(
          'site_limit_reached',
          `this license allows ${limit} production site${limit === 1 ? '' : 's'} and all are in use: deactivate the license on another site first`,
          { site_limit: limit, sites_used: used },
        );
      }
    } else {
      const limit = stagingCap(license, plan?.site_limit);
      if (used >= limit) {
        throw new CloudError(
          'site_limit_reached',
          `this license allows ${limit} staging site${limit === 1 ? '' : 's'} and all are in use: deactivate the license on another staging site first, or ask the vendor for more (licenses create --staging-sites)`,
          { staging_limit: limit, staging_used: used },
        );
      }
    }
    await bindLicense(tx, site.id, license.id, license.account_id);
  });
  const { body } = await answer(ctx, site.id);
  ctx.log.info('license activated', { site_id: site.id, key_preview: body.license.key_preview });
  return body;
}

/** license/deactivate: frees the seat; the site keeps its identity and account. */
export async function deactivate(ctx: Ctx, site: SiteRow) {
  await bindLicense(ctx.db, site.id, null, null);
  const g = await loadGrants(ctx.db, (await siteById(ctx.db, site.id))!, ctx.now());
  return { success: true as const, site_id: site.id, license: await licenseView(ctx.db, g) };
}

/** license/status: always answers (status active | expired | invalid) with a certificate saying the same. */
export async function status(ctx: Ctx, site: SiteRow) {
  return (await answer(ctx, site.id)).body;
}

/** license/refresh: a fresh certificate while the license is good; otherwise the refusal, with a signed certificate that says why. */
export async function refresh(ctx: Ctx, site: SiteRow) {
  const { g, body } = await answer(ctx, site.id);
  if (g.grants.status !== 'active') throw refusal(g.grants.status, { certificate: body.certificate });
  return body;
}

export { refusal as licenseRefusal };
