import { APP_PRODUCT } from '../contract/cloud/updates.ts';
import type { ReleaseArch, ReleaseFile, ReleaseManifest, ReleasePlatform } from '../contract/cloud/updates.ts';
import type { UpdatesPackageAnswer, UpdatesQuery } from '../contract/cloud/ai-updates-answers.ts';

/** A release whose manifest verified against the pinned gateway key, with the gateway's download links. */
export interface VerifiedPackage {
  manifest: ReleaseManifest;
  links: { name: string; url: string }[];
}

export type PackageResult = { ok: true; pkg: VerifiedPackage } | { ok: false; reason: string };

/** The part of the app's cloud client (main/cloud-client) the updater uses: the signed API, and the manifest check against the pinned key. */
export interface PackageClient {
  readonly api: { updatesPackage(q: UpdatesQuery): Promise<{ data: UpdatesPackageAnswer }> } | null;
  openManifest(signed: unknown): { ok: true; payload: ReleaseManifest } | { ok: false; reason: string };
}

/**
 * updates/package through the cloud client: the manifest again with signed,
 * expiring links. Nothing in the answer is used before the manifest verified
 * against the key pinned at connect.
 */
export function cloudPackageSource(
  client: PackageClient,
  target: { version: string; platform: ReleasePlatform; arch: ReleaseArch },
) {
  return async (): Promise<PackageResult> => {
    const api = client.api;
    if (!api) return { ok: false, reason: 'not connected to a cloud gateway' };
    let answer: UpdatesPackageAnswer;
    try {
      answer = (
        await api.updatesPackage({
          product: APP_PRODUCT,
          version: target.version,
          platform: target.platform,
          arch: target.arch,
        })
      ).data;
    } catch (e) {
      return { ok: false, reason: `updates/package failed: ${(e as Error).message}` };
    }
    const opened = client.openManifest(answer.manifest);
    if (!opened.ok)
      return {
        ok: false,
        reason: `the release manifest did not verify against the pinned gateway key (${opened.reason})`,
      };
    return {
      ok: true,
      pkg: { manifest: opened.payload, links: answer.files.map((f) => ({ name: f.name, url: f.url })) },
    };
  };
}

/** This machine in the manifest's terms. */
export function releaseTarget(
  platform: NodeJS.Platform,
  arch: string,
): { platform: ReleasePlatform; arch: ReleaseArch } | null {
  const p = platform === 'win32' ? 'win' : platform === 'darwin' ? 'mac' : platform === 'linux' ? 'linux' : null;
  const a = arch === 'arm' ? 'armv7l' : (['x64', 'arm64', 'ia32'] as const).find((x) => x === arch);
  return p && a ? { platform: p, arch: a } : null;
}

/** The installer electron-builder makes for each platform, in order of preference. */
const PREFERRED: Record<ReleasePlatform, RegExp[]> = {
  win: [/\.exe$/i, /\.msi$/i],
  mac: [/\.dmg$/i, /\.zip$/i],
  linux: [/\.AppImage$/, /\.deb$/, /\.rpm$/],
};

/** The file of a release for this machine: its platform, its arch (or universal), the usual installer first. */
export function pickFile(
  files: readonly ReleaseFile[],
  target: { platform: ReleasePlatform; arch: ReleaseArch },
): ReleaseFile | null {
  const fits = files.filter(
    (f) => f.platform === target.platform && (f.arch === target.arch || f.arch === 'universal'),
  );
  const rank = (f: ReleaseFile) => {
    const i = PREFERRED[target.platform].findIndex((re) => re.test(f.name));
    return (i === -1 ? 99 : i) * 2 + (f.arch === target.arch ? 0 : 1);
  };
  return [...fits].sort((a, b) => rank(a) - rank(b))[0] ?? null;
}
