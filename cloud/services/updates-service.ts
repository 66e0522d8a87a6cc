import { createHash } from 'node:crypto';
import type { z } from 'zod';
import {
  CLOUD_BASE_PATH,
  CLOUD_PRODUCTS,
  type CloudProduct,
  type ReleaseArch,
  type ReleaseManifest,
  type ReleasePlatform,
  type SignedManifest,
  type UpdatesVerifyBody,
} from '../../main/contract/cloud/index.ts';
import type { UpdatesQuery } from '../../main/contract/cloud/index.ts';
import { mintDownloadToken, openDownloadToken } from '../crypto/download-token.ts';
import { CloudError } from '../errors.ts';
import { releasesOf, releasesOfVersion, type ReleaseRow } from '../repo/releases-repo.ts';
import { siteById, type SiteRow } from '../repo/sites-repo.ts';
import { buildUpdateInfo, feedFiles, feedYaml, parseFeedFileName } from '../updates/feed.ts';
import { checkReleaseFile, openManifest } from '../updates/manifest.ts';
import { openReleaseFile, releasePath } from '../updates/release-store.ts';
import { compareVersions, newestFirst } from '../../main/lib/version-order.ts';
import type { Ctx } from './context.ts';
import { loadGrants, supportOf, type SiteGrants } from './grants-service.ts';

/**
 * updates/check, updates/package, updates/verify and the token-gated files
 * (the electron-updater feed and the release files). A site may update a
 * product on a channel while its license is active, the channel is one of
 * its plan's and the product is not switched off; every download re-checks
 * that, so a license that expires stops the feed at once.
 */
export const FEED_TOKEN_TTL_S = 24 * 3600;
export const DOWNLOAD_TOKEN_TTL_S = 3600;
const TOKEN_PURPOSE = 'release-download-token';

type Query = z.output<typeof UpdatesQuery>;

/** The channel the site may use, or update_not_allowed with the reason. */
export function eligibleChannel(g: SiteGrants, product: string, asked: string | undefined): string {
  const status = g.grants.status;
  if (status !== 'active') {
    throw new CloudError(
      'update_not_allowed',
      status === 'expired'
        ? `the license expired${g.license?.expires_at ? ` at ${g.license.expires_at}` : ''}: renew it to get updates`
        : 'no valid license is activated on this site: activate one to get updates',
      {
        reason: status === 'expired' ? 'license_expired' : 'license_invalid',
      },
    );
  }
  const channels = g.plan?.update_channels ?? [];
  const channel = asked ?? channels[0] ?? 'stable';
  if (!channels.includes(channel)) {
    throw new CloudError(
      'update_not_allowed',
      `the ${g.plan?.id ?? 'current'} plan has no '${channel}' channel: use ${channels.join(' or ') || 'none'}`,
      { reason: 'channel_not_in_plan', channels },
    );
  }
  if (
    (CLOUD_PRODUCTS as readonly string[]).includes(product) &&
    g.grants.products[product as CloudProduct] !== 'active'
  ) {
    throw new CloudError('update_not_allowed', `the product '${product}' is not active for this site`, {
      reason: 'product_inactive',
    });
  }
  return channel;
}

/** Does the release have something for this platform (linux per arch, x64 by default)? */
const servesTarget = (m: ReleaseManifest, platform?: ReleasePlatform, arch?: ReleaseArch) =>
  !platform ||
  feedFiles(m, { channel: m.channel, platform, arch: arch ?? (platform === 'linux' ? 'x64' : 'universal') }).length > 0;

/** A site's fixed place in a staged rollout of one version: 0-99, from its id, the same on every instance. */
export function rolloutSlot(siteId: string, version: string): number {
  return createHash('sha256').update(`${siteId}\n${version}`).digest().readUInt32BE(0) % 100;
}

async function newest(
  ctx: Ctx,
  product: string,
  channel: string,
  platform?: ReleasePlatform,
  arch?: ReleaseArch,
): Promise<ReleaseRow | null> {
  return (
    newestFirst(await releasesOf(ctx.db, product, channel)).find((r) => servesTarget(r.manifest, platform, arch)) ??
    null
  );
}

function filesUrl(
  ctx: Ctx,
  origin: string,
  siteId: string,
  product: string,
  channel: string,
  ttl: number,
): { base: string; expires_at: string } {
  const exp = Math.floor(ctx.now().getTime() / 1000) + ttl;
  const token = mintDownloadToken(ctx.box.derive(TOKEN_PURPOSE), { v: 1, s: siteId, p: product, c: channel, x: exp });
  return {
    base: `${origin}${CLOUD_BASE_PATH}/updates/files/${token}/`,
    expires_at: new Date(exp * 1000).toISOString(),
  };
}

export async function updatesCheck(ctx: Ctx, site: SiteRow, q: Query, origin: string) {
  const g = await loadGrants(ctx.db, site, ctx.now());
  const channel = eligibleChannel(g, q.product, q.channel);
  const latest = await newest(ctx, q.product, channel, q.platform, q.arch);
  const inRollout = !!latest && rolloutSlot(site.id, latest.version) < latest.manifest.staging_percentage;
  const feed = filesUrl(ctx, origin, site.id, q.product, channel, FEED_TOKEN_TTL_S);
  return {
    success: true as const,
    product: q.product,
    channel,
    eligible: true,
    current_version: q.version,
    update_available: !!latest && inRollout && compareVersions(latest.version, q.version) > 0,
    latest: latest
      ? {
          version: latest.version,
          released_at: latest.manifest.released_at,
          staging_percentage: latest.manifest.staging_percentage,
          in_rollout: inRollout,
          notes: latest.manifest.notes,
        }
      : null,
    manifest: latest?.signed ?? null,
    feed_url: feed.base,
    feed_expires_at: feed.expires_at,
  };
}

export async function updatesPackage(ctx: Ctx, site: SiteRow, q: Query, origin: string) {
  const g = await loadGrants(ctx.db, site, ctx.now());
  const channel = eligibleChannel(g, q.product, q.channel);
  const latest = await newest(ctx, q.product, channel, q.platform, q.arch);
  if (!latest)
    throw new CloudError(
      'not_found',
      `no release of ${q.product} is published on the ${channel} channel${q.platform ? ` for ${q.platform}` : ''}`,
    );
  const files = q.platform
    ? feedFiles(latest.manifest, {
        channel,
        platform: q.platform,
        arch: q.arch ?? (q.platform === 'linux' ? 'x64' : 'universal'),
      })
    : latest.manifest.files;
  const dl = filesUrl(ctx, origin, site.id, q.product, channel, DOWNLOAD_TOKEN_TTL_S);
  return {
    success: true as const,
    product: q.product,
    channel,
    version: latest.version,
    manifest: latest.signed,
    files: files.map((f) => ({ ...f, url: `${dl.base}${encodeURIComponent(f.name)}`, expires_at: dl.expires_at })),
  };
}

export async function updatesVerify(ctx: Ctx, body: z.output<typeof UpdatesVerifyBody>) {
  const keys = await ctx.keys.verifyKeys(ctx.now());
  const digest = { sha512: body.sha512, size: body.size };
  const judge = (signed: SignedManifest) => {
    const opened = openManifest(signed, keys);
    if (!opened.ok) return { valid: false, reason: opened.reason };
    const m = opened.manifest;
    if (m.product !== body.product || m.version !== body.version)
      return {
        valid: false,
        reason: `the manifest is for ${m.product} ${m.version}, not ${body.product} ${body.version}`,
      };
    const file = checkReleaseFile(m, body.name, digest);
    return file.ok ? { valid: true, reason: null, channel: m.channel } : { valid: false, reason: file.reason };
  };
  if (body.manifest) return { success: true as const, ...judge(body.manifest) };
  const published = (await releasesOfVersion(ctx.db, body.product, body.version)).filter((r) =>
    r.manifest.files.some((f) => f.name === body.name),
  );
  if (!published.length)
    return {
      success: true as const,
      valid: false,
      reason: `no published release of ${body.product} ${body.version} has a file named ${JSON.stringify(body.name)}`,
    };
  // The same version may be published on several channels with their own bytes: the file is good when one of them says so.
  const verdicts = published.map((r) => judge(r.signed));
  return { success: true as const, ...(verdicts.find((v) => v.valid) ?? verdicts[0]!) };
}

export type FileAnswer =
  { kind: 'yaml'; text: string } | { kind: 'file'; name: string; size: number; stream: () => NodeJS.ReadableStream };

/**
 * GET updates/files/:token/:name: a feed file (`latest-linux.yml`, ...) or a
 * release file, for the site the token names, while that site may update.
 */
export async function updatesFile(
  ctx: Ctx,
  token: string,
  name: string,
  admit: (site: SiteRow) => void = () => {},
): Promise<{ site: SiteRow; support: ReturnType<typeof supportOf>; answer: FileAnswer }> {
  const now = ctx.now();
  const t = openDownloadToken(ctx.box.derive(TOKEN_PURPOSE), token, Math.floor(now.getTime() / 1000));
  if (!t.ok)
    throw new CloudError(
      'unauthorized',
      t.reason === 'expired'
        ? 'this download link has expired: ask updates/check or updates/package for a new one'
        : 'this download link is not valid: ask updates/check or updates/package for one',
    );
  const site = await siteById(ctx.db, t.grant.s);
  if (!site || site.status !== 'active')
    throw new CloudError('invalid_site', 'the site of this download link was disconnected', {}, { status: 403 });
  admit(site);
  const g = await loadGrants(ctx.db, site, now);
  const channel = eligibleChannel(g, t.grant.p, t.grant.c);
  const support = supportOf(g);
  const releases = newestFirst(await releasesOf(ctx.db, t.grant.p, channel));

  const target = parseFeedFileName(name);
  if (target) {
    if (target.channel !== channel)
      throw new CloudError('not_found', `this link is for the ${channel} channel, not ${target.channel}`);
    for (const r of releases) {
      const info = buildUpdateInfo(r.manifest, target, (f) => encodeURIComponent(f.name));
      if (info) return { site, support, answer: { kind: 'yaml', text: feedYaml(info) } };
    }
    throw new CloudError(
      'not_found',
      `no release of ${t.grant.p} on ${channel} has files for ${target.platform}${target.platform === 'linux' ? ` ${target.arch}` : ''}`,
    );
  }
  const owner = releases.find((r) => r.manifest.files.some((f) => f.name === name));
  if (!owner)
    throw new CloudError(
      'not_found',
      `no release of ${t.grant.p} on ${channel} has a file named ${JSON.stringify(name.slice(0, 200))}`,
    );
  const stored = await openReleaseFile(releasePath(ctx.releasesDir, owner.product, owner.channel, owner.version, name));
  if (!stored) {
    ctx.log.error('a published release file is missing from the release folder', {
      product: owner.product,
      channel: owner.channel,
      version: owner.version,
      name,
    });
    throw new CloudError('internal_error', 'this release file is missing on the gateway: the vendor has been told');
  }
  return { site, support, answer: { kind: 'file', name, size: stored.size, stream: stored.stream } };
}
