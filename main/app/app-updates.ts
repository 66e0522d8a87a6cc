import { join } from 'node:path';
import { PRINCIPALS } from '../contract/principal.ts';
import { dispatchAs } from '../core/admin/invoke.ts';
import type { Invoke } from '../core/admin/invoke.ts';
import { DesktopUpdater } from '../updates/desktop-updater.ts';
import type { UpdaterState } from '../updates/desktop-updater.ts';
import { cloudPackageSource, releaseTarget } from '../updates/release-source.ts';
import type { PackageClient } from '../updates/release-source.ts';
import { VERSION } from '../version.ts';

const FIRST_CHECK_MS = 60_000;
const CHECK_EVERY_MS = 6 * 3_600_000;

/**
 * The desktop app's update checks: a minute after start, then every six
 * hours, through the service's cloud client (the logic is main/updates/). A
 * verified update is only offered (tray item, notification); installing is
 * the person's click.
 */
export function startAppUpdates(deps: {
  invoke: Invoke;
  cloud: PackageClient;
  dataDir: string;
  platform: NodeJS.Platform;
  arch: string;
  onState: (state: UpdaterState) => void;
}): { updater: DesktopUpdater; stop: () => void } | null {
  const target = releaseTarget(deps.platform, deps.arch);
  if (!target) return null;
  const dispatch = dispatchAs(deps.invoke, PRINCIPALS.tray);
  const updater = new DesktopUpdater({
    check: () => dispatch('updates.check', {}),
    package: cloudPackageSource(deps.cloud, { version: VERSION, ...target }),
    target,
    dir: join(deps.dataDir, 'updates'),
    onChange: deps.onState,
  });
  const check = () => void updater.check().catch(() => undefined);
  const first = setTimeout(check, FIRST_CHECK_MS);
  const every = setInterval(check, CHECK_EVERY_MS);
  first.unref?.();
  every.unref?.();
  return {
    updater,
    stop: () => {
      clearTimeout(first);
      clearInterval(every);
    },
  };
}
