import { dump } from 'js-yaml';
import {
  ReleaseArch,
  ReleaseChannel,
  type ReleaseArch as Arch,
  type ReleaseFile,
  type ReleaseManifest,
  type ReleasePlatform,
} from '../../main/contract/cloud/updates.ts';

/**
 * The electron-updater "generic" provider feed for a release: the channel
 * file (`latest.yml`, `latest-mac.yml`, `latest-linux.yml`, `beta-mac.yml`,
 * `latest-linux-arm64.yml`, ...) with version, files [{url, sha512, size}],
 * the deprecated top-level path and sha512, releaseDate and
 * stagingPercentage. The desktop app points electron-updater at the
 * gateway's feed URL and updates from it without a third-party host.
 */

/** electron-updater's default channel is `latest`; ours is `stable`. */
const feedChannel = (channel: string): string => (channel === 'stable' ? 'latest' : channel);

export interface FeedTarget {
  channel: string;
  platform: ReleasePlatform;
  /** linux has one feed per arch (x64 is the unsuffixed one); win and mac list every arch in one file */
  arch: Arch;
}

/** The file name electron-updater asks for, as its GenericProvider builds it. */
export function feedFileName(t: FeedTarget): string {
  const base = feedChannel(t.channel);
  if (t.platform === 'mac') return `${base}-mac.yml`;
  if (t.platform === 'linux') return `${base}-linux${t.arch === 'x64' ? '' : `-${t.arch}`}.yml`;
  return `${base}.yml`;
}

/** The inverse, for the route that serves feeds; null for anything that is not a feed file name. */
export function parseFeedFileName(name: string): FeedTarget | null {
  const m = /^([a-z][a-z0-9]{0,31})(?:-(mac)|-(linux)(?:-([a-z0-9]+))?)?\.yml$/.exec(name);
  if (!m) return null;
  const channel = m[1] === 'latest' ? 'stable' : m[1]!;
  if (!ReleaseChannel.safeParse(channel).success) return null;
  if (m[2]) return { channel, platform: 'mac', arch: 'universal' };
  if (m[3]) {
    const arch = ReleaseArch.safeParse(m[4] ?? 'x64');
    return arch.success ? { channel, platform: 'linux', arch: arch.data } : null;
  }
  return { channel, platform: 'win', arch: 'x64' };
}

export interface UpdateInfoFile {
  url: string;
  sha512: string;
  size: number;
}

/** electron-updater's UpdateInfo, as builder-util-runtime defines it. */
export interface UpdateInfo {
  version: string;
  files: UpdateInfoFile[];
  path: string;
  sha512: string;
  releaseDate: string;
  stagingPercentage: number;
  releaseNotes?: string;
}

/** The files of a release that belong in this platform's feed. */
export function feedFiles(m: ReleaseManifest, t: FeedTarget): ReleaseFile[] {
  return m.files.filter((f) => f.platform === t.platform && (t.platform !== 'linux' || f.arch === t.arch));
}

/**
 * The update info for one feed, or null when the release has no file for
 * it. `urlFor` says where each file is downloaded from; a relative URL is
 * resolved by electron-updater against the feed's own URL.
 */
export function buildUpdateInfo(
  m: ReleaseManifest,
  t: FeedTarget,
  urlFor: (f: ReleaseFile) => string = (f) => f.name,
): UpdateInfo | null {
  const files = feedFiles(m, t).map((f) => ({ url: urlFor(f), sha512: f.sha512, size: f.size }));
  const first = files[0];
  if (!first) return null;
  return {
    version: m.version,
    files,
    path: first.url,
    sha512: first.sha512,
    releaseDate: m.released_at,
    stagingPercentage: m.staging_percentage,
    ...(m.notes ? { releaseNotes: m.notes } : {}),
  };
}

/** The channel file's text. */
export function feedYaml(info: UpdateInfo): string {
  return dump(info, { lineWidth: -1, noRefs: true, sortKeys: false });
}
