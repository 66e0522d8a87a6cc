import type { UpdatesCheckInput, UpdatesView } from '../contract/cloud-actions.ts';
import { APP_PRODUCT } from '../contract/cloud/updates.ts';
import type { z } from 'zod';
import type { Clock } from '../lib/clock.ts';
import { compareVersions } from '../lib/version-order.ts';
import { VERSION } from '../version.ts';
import type { CloudClient } from './cloud-client.ts';
import { asFailure } from './cloud-client-types.ts';

const NO_UPDATES: Omit<UpdatesView, 'connected' | 'current_version'> = {
  channel: null,
  eligible: null,
  checked_at: null,
  latest_version: null,
  update_available: false,
  release: null,
  refused: null,
  error: null,
};

const platformOf = (): 'win' | 'mac' | 'linux' =>
  process.platform === 'win32' ? 'win' : process.platform === 'darwin' ? 'mac' : 'linux';

/** updates.status / updates.check: the gateway's offer, kept only once its signed manifest verified and is newer. */
export function updateChecks(d: { client: CloudClient; clock: Clock; changed: () => void }) {
  const c = d.client;
  let updates = NO_UPDATES;
  const view = (): UpdatesView => ({ connected: c.connected(), current_version: VERSION, ...updates });

  /** The release the signed manifest names, or why it is refused. */
  const verifiedRelease = (
    manifest: Parameters<CloudClient['openManifest']>[0],
    channel: string | null,
  ): { release: UpdatesView['release']; refused: string | null } => {
    const opened = c.openManifest(manifest);
    if (!opened.ok)
      return {
        release: null,
        refused: `the release manifest did not verify against the pinned gateway key (${opened.reason}); no update is offered`,
      };
    // The gateway signs every product's releases with one key: a valid signature does not make it ours.
    if (opened.payload.product !== APP_PRODUCT)
      return {
        release: null,
        refused: `the signed release manifest is for the product '${opened.payload.product}', not '${APP_PRODUCT}'; no update is offered`,
      };
    // The answer's own `channel` is not signed: the channel asked for, or the signed certificate's, is the one that counts.
    if (channel !== null && opened.payload.channel !== channel)
      return {
        release: null,
        refused: `the signed release manifest is for the '${opened.payload.channel}' channel, not '${channel}'; no update is offered`,
      };
    const m = opened.payload;
    return {
      release: {
        version: m.version,
        channel: m.channel,
        released_at: m.released_at,
        notes: m.notes,
        files: m.files.map(({ name, platform, arch, size }) => ({ name, platform, arch, size })),
      },
      refused: null,
    };
  };

  return {
    view,
    async check(i: z.output<typeof UpdatesCheckInput>): Promise<UpdatesView> {
      const api = c.api;
      const checked_at = new Date(d.clock.now()).toISOString();
      const channel = i.channel ?? c.status().certificate?.update.channel ?? null;
      if (!api) {
        updates = {
          ...updates,
          checked_at,
          channel,
          error: {
            code: 'invalid_site',
            message:
              'this service is not connected to a cloud gateway: connect it first (gatehouse cloud connect --url GATEWAY_URL)',
            request_id: null,
          },
        };
        return view();
      }
      try {
        const ans = (
          await api.updatesCheck({
            product: APP_PRODUCT,
            version: VERSION,
            ...(i.channel ? { channel: i.channel } : {}),
            platform: platformOf(),
          })
        ).data;
        const verified = ans.manifest ? verifiedRelease(ans.manifest, channel) : { release: null, refused: null };
        const release = verified.release;
        let refused = verified.refused;
        // Only a strictly newer version is an update: an older signed manifest replayed (or an equal one) would be a downgrade or a loop.
        const newer = release !== null && compareVersions(release.version, VERSION) > 0;
        if (ans.update_available && release && !newer)
          refused = `the gateway offered version ${release.version}, which is not newer than the running ${VERSION} (an old signed manifest replayed?); no update is offered`;
        const offered = ans.update_available && newer;
        updates = {
          channel: channel ?? ans.channel,
          eligible: ans.eligible,
          checked_at,
          latest_version: release?.version ?? null,
          update_available: offered,
          release,
          refused,
          error: null,
        };
      } catch (e) {
        updates = { ...updates, channel, checked_at, error: asFailure(e) };
      }
      d.changed();
      return view();
    },
    /** the old site's update checks are not the next one's */
    reset(): void {
      updates = NO_UPDATES;
    },
  };
}
