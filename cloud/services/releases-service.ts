import { isAbsolute, basename } from 'node:path';
import type { ReleaseArch, ReleaseFile, ReleasePlatform } from '../../main/contract/cloud/index.ts';
import { shortId } from '../../main/lib/ids.ts';
import { CloudError } from '../errors.ts';
import { listReleases, releaseOf, upsertRelease, type ReleaseRow } from '../repo/releases-repo.ts';
import { hashFile, sameSha512 } from '../updates/file-hash.ts';
import { guessTarget } from '../updates/file-target.ts';
import { buildManifest, signManifest } from '../updates/manifest.ts';
import { storeReleaseFile } from '../updates/release-store.ts';
import type { Ctx } from './context.ts';

/**
 * `releases publish` and `releases stage`: the operator's side of updates.
 * A version's files never change once published (sites may have verified
 * them): publishing it again with the same files re-signs it (a new staging
 * percentage or notes), with other files it is refused. Files are stored
 * before the release row is written, so a crash in between leaves at most
 * unreferenced files, never a release without its bytes.
 */
export interface PublishArgs {
  product: string;
  channel: string;
  version: string;
  /** absolute paths on the gateway's machine */
  files: string[];
  staging?: number;
  notes?: string | null;
  platform?: ReleasePlatform;
  arch?: ReleaseArch;
}

const view = (r: ReleaseRow) => ({
  id: r.id,
  product: r.product,
  channel: r.channel,
  version: r.version,
  staging_percentage: r.manifest.staging_percentage,
  released_at: r.manifest.released_at,
  files: r.manifest.files,
  kid: r.signed.kid,
});

export async function publishRelease(ctx: Ctx, a: PublishArgs) {
  const now = ctx.now();
  const targets = a.files.map((path) => {
    if (!isAbsolute(path))
      throw new CloudError('invalid_request', `give release files as absolute paths (got ${path.slice(0, 200)})`);
    const guessed = guessTarget(basename(path));
    const platform = a.platform ?? guessed?.platform;
    if (!platform)
      throw new CloudError(
        'invalid_request',
        `cannot tell the platform of ${basename(path).slice(0, 200)} from its name: give --platform win|mac|linux (and --arch)`,
      );
    return { path, platform, arch: a.arch ?? guessed?.arch ?? 'x64' };
  });
  if (new Set(targets.map((t) => basename(t.path))).size !== targets.length)
    throw new CloudError('invalid_request', 'two files have the same name');

  const existing = await releaseOf(ctx.db, a.product, a.channel, a.version);
  const digests = await Promise.all(targets.map((t) => hashFile(t.path).catch(() => null)));
  digests.forEach((d, i) => {
    if (!d) throw new CloudError('invalid_request', `cannot read ${targets[i]!.path.slice(0, 500)}`);
  });
  if (existing) {
    const before = existing.manifest.files;
    const same =
      before.length === targets.length &&
      targets.every((t, i) =>
        before.some(
          (f) => f.name === basename(t.path) && f.size === digests[i]!.size && sameSha512(f.sha512, digests[i]!.sha512),
        ),
      );
    if (!same)
      throw new CloudError(
        'conflict',
        `${a.product} ${a.version} is already published on ${a.channel} with other files: a published version never changes; publish a new version`,
      );
  }

  const files: ReleaseFile[] = [];
  for (const [i, t] of targets.entries()) {
    const stored = await storeReleaseFile(ctx.releasesDir, a.product, a.channel, a.version, t.path);
    if (!sameSha512(stored.sha512, digests[i]!.sha512))
      throw new CloudError('conflict', `${stored.name} changed while it was being published: publish again`);
    files.push({ name: stored.name, platform: t.platform, arch: t.arch, size: stored.size, sha512: stored.sha512 });
  }
  const row = await sign(
    ctx,
    existing,
    {
      product: a.product,
      channel: a.channel,
      version: a.version,
      files,
      staging: a.staging ?? existing?.manifest.staging_percentage ?? 100,
      notes: a.notes !== undefined ? a.notes : (existing?.manifest.notes ?? null),
    },
    now,
  );
  ctx.log.info('release published', {
    product: a.product,
    channel: a.channel,
    version: a.version,
    files: files.length,
    staging_percentage: row.manifest.staging_percentage,
  });
  return view(row);
}

/** `releases stage`: widen (or narrow) a published version's rollout; the manifest is signed again. */
export async function stageRelease(
  ctx: Ctx,
  a: { product: string; channel: string; version: string; percentage: number },
) {
  const existing = await releaseOf(ctx.db, a.product, a.channel, a.version);
  if (!existing)
    throw new CloudError(
      'not_found',
      `${a.product} ${a.version} is not published on ${a.channel}: releases list shows what is`,
    );
  const m = existing.manifest;
  return view(
    await sign(
      ctx,
      existing,
      {
        product: m.product,
        channel: m.channel,
        version: m.version,
        files: m.files,
        staging: a.percentage,
        notes: m.notes,
      },
      ctx.now(),
    ),
  );
}

async function sign(
  ctx: Ctx,
  existing: ReleaseRow | null,
  r: { product: string; channel: string; version: string; files: ReleaseFile[]; staging: number; notes: string | null },
  now: Date,
): Promise<ReleaseRow> {
  let manifest;
  try {
    manifest = buildManifest(
      {
        product: r.product,
        channel: r.channel,
        version: r.version,
        released_at: existing?.manifest.released_at ?? now.toISOString(),
        staging_percentage: r.staging,
        notes: r.notes,
        files: r.files,
      },
      now,
    );
  } catch (e) {
    throw new CloudError('invalid_request', `the release is not valid: ${(e as Error).message.slice(0, 300)}`);
  }
  const signed = await signManifest(manifest, (bytes) => ctx.keys.signBytes(bytes));
  return upsertRelease(
    ctx.db,
    {
      id: existing?.id ?? shortId('rel', 10),
      product: r.product,
      channel: r.channel,
      version: r.version,
      manifest,
      signed,
    },
    now,
  );
}

/**
 * After `keys rotate`: every release is signed again with the new key (the
 * same payload bytes), so a manifest stays verifiable after the retired key
 * leaves the JWKS; until then the old signatures verify too.
 */
export async function resignReleases(ctx: Ctx): Promise<number> {
  const now = ctx.now();
  let n = 0;
  for (const r of await listReleases(ctx.db)) {
    const signed = await signManifest(r.manifest, (bytes) => ctx.keys.signBytes(bytes));
    await upsertRelease(
      ctx.db,
      { id: r.id, product: r.product, channel: r.channel, version: r.version, manifest: r.manifest, signed },
      now,
    );
    n++;
  }
  return n;
}
