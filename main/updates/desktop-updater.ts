import { APP_PRODUCT, ReleaseVersion } from '../contract/cloud/updates.ts';
import type { ReleaseArch, ReleasePlatform } from '../contract/cloud/updates.ts';
import type { UpdatesView } from '../contract/cloud-actions.ts';
import type { Result } from '../contract/errors.ts';
import { compareVersions } from '../lib/version-order.ts';
import { VERSION } from '../version.ts';
import type { PackageResult } from './release-source.ts';
import { pickFile } from './release-source.ts';
import { downloadVerified, hashFile } from './verified-download.ts';
import type { ExpectedFile } from './verified-download.ts';

/** Where the desktop app's update stands; `ready` is the only state in which it offers to install. */
export type UpdaterState =
  | { phase: 'idle' }
  | { phase: 'checking' }
  | { phase: 'up_to_date'; version: string }
  | { phase: 'downloading'; version: string }
  | { phase: 'ready'; version: string; path: string; file: ExpectedFile; notes: string | null }
  | { phase: 'failed'; reason: string };

export interface UpdaterDeps {
  /** `updates.check` through the service: eligibility and the newest release, offered only once its manifest verified */
  check(): Promise<Result<UpdatesView>>;
  /** the same release's verified manifest and download links (updates/package) */
  package(): Promise<PackageResult>;
  target: { platform: ReleasePlatform; arch: ReleaseArch };
  /** the version running now (default: this package's): only a strictly newer release is downloaded and offered */
  currentVersion?: string;
  /** where verified downloads are kept (the data dir's `updates/`) */
  dir: string;
  fetch?: typeof fetch;
  onChange?(state: UpdaterState): void;
}

/**
 * The desktop app's updater, plain Node so it is tested without Electron.
 * It offers an update only after (1) the service's cloud client verified the
 * release manifest against the pinned gateway key, (2) the package's manifest
 * verified again, names the same version, is this app's product (`mcp`) and
 * is newer than the running version (checked here too, whatever the service
 * said: a replayed older signed manifest would be a downgrade), and (3) the
 * downloaded file's size and SHA-512 are the manifest's. It never installs by itself: `install`
 * runs only when a person asks, and checks the file on disk once more first.
 */
export class DesktopUpdater {
  private current: UpdaterState = { phase: 'idle' };
  private running: Promise<UpdaterState> | null = null;

  constructor(private readonly deps: UpdaterDeps) {}

  get state(): UpdaterState {
    return this.current;
  }

  /** Check, and download and verify what is offered. Overlapping calls share one run. */
  check(): Promise<UpdaterState> {
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * Hand the verified installer to `open` (the shell opens it for the person).
   * Refused unless an update is ready and the file still hashes to the
   * manifest's SHA-512: the file may have been changed since it was checked.
   */
  async install(open: (path: string) => Promise<void>): Promise<{ ok: true } | { ok: false; reason: string }> {
    const s = this.current;
    if (s.phase !== 'ready') return { ok: false, reason: 'no verified update is ready' };
    const now = await hashFile(s.path).catch(() => null);
    if (!now || now.sha512 !== s.file.sha512 || now.size !== s.file.size) {
      this.set({
        phase: 'failed',
        reason: 'the downloaded update changed on disk after it was verified; it was not opened',
      });
      return { ok: false, reason: 'the downloaded update changed on disk after it was verified' };
    }
    await open(s.path);
    return { ok: true };
  }

  private set(state: UpdaterState): UpdaterState {
    this.current = state;
    this.deps.onChange?.(state);
    return state;
  }

  private async run(): Promise<UpdaterState> {
    const ready = this.current.phase === 'ready' ? this.current : null;
    this.set({ phase: 'checking' });
    const checked = await this.deps.check();
    if (!checked.ok) return this.set({ phase: 'failed', reason: `${checked.message} (${checked.code})` });
    const view = checked.data;
    if (view.error) return this.set({ phase: 'failed', reason: `${view.error.message} (${view.error.code})` });
    if (view.refused) return this.set({ phase: 'failed', reason: view.refused });
    if (!view.update_available || !view.latest_version)
      return this.set({ phase: 'up_to_date', version: view.current_version });
    const version = view.latest_version;
    const current = this.deps.currentVersion ?? VERSION;
    if (!newerThan(version, current))
      return this.set({
        phase: 'failed',
        reason: `the service offered version ${version}, which is not newer than the running ${current}; nothing was downloaded`,
      });
    if (ready && ready.version === version) return this.set(ready);

    this.set({ phase: 'downloading', version });
    const pkg = await this.deps.package();
    if (!pkg.ok) return this.set({ phase: 'failed', reason: pkg.reason });
    const { manifest, links } = pkg.pkg;
    if (manifest.product !== APP_PRODUCT)
      return this.set({
        phase: 'failed',
        reason: `the package's signed manifest is for the product '${manifest.product}', not '${APP_PRODUCT}'; nothing was downloaded`,
      });
    if (!view.release)
      return this.set({
        phase: 'failed',
        reason: 'the check offered a version without its verified release; nothing was downloaded',
      });
    if (manifest.channel !== view.release.channel)
      return this.set({
        phase: 'failed',
        reason: `the package is from the '${manifest.channel}' channel, the check offered '${view.release.channel}'; nothing was downloaded`,
      });
    if (manifest.version !== version)
      return this.set({
        phase: 'failed',
        reason: `the package is version ${manifest.version}, the check offered ${version}; nothing was downloaded`,
      });
    if (!newerThan(manifest.version, current))
      return this.set({
        phase: 'failed',
        reason: `the package is version ${manifest.version}, not newer than the running ${current}; nothing was downloaded`,
      });
    const file = pickFile(manifest.files, this.deps.target);
    if (!file)
      return this.set({
        phase: 'failed',
        reason: `release ${version} has no file for ${this.deps.target.platform} ${this.deps.target.arch}`,
      });
    const link = links.find((l) => l.name === file.name);
    if (!link) return this.set({ phase: 'failed', reason: `the gateway gave no download link for ${file.name}` });
    const expected: ExpectedFile = { name: file.name, size: file.size, sha512: file.sha512 };
    const got = await downloadVerified({
      url: link.url,
      file: expected,
      dir: this.deps.dir,
      ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}),
    });
    if (!got.ok) return this.set({ phase: 'failed', reason: got.reason });
    return this.set({ phase: 'ready', version, path: got.path, file: expected, notes: manifest.notes });
  }
}

/** `version` is a release version strictly newer than `current` (anything that is not a release version is not). */
function newerThan(version: string, current: string): boolean {
  return ReleaseVersion.safeParse(version).success && compareVersions(version, current) > 0;
}
