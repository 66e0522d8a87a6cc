import type { CloudLicenseAnswer } from '../contract/cloud-actions.ts';
import type { Stats } from '../contract/audit.ts';
import type { CloudActions } from '../core/ports/cloud-port.ts';
import type { Clock } from '../lib/clock.ts';
import type { CloudClient } from './cloud-client.ts';
import { asFailure } from './cloud-client-types.ts';
import { quotaAlerts } from './cloud-quota-alerts.ts';
import { updateChecks } from './cloud-update-checks.ts';
import { usageViews } from './cloud-usage-view.ts';

export interface CloudActionsDeps {
  client: CloudClient;
  clock: Clock;
  /** the local counters (what this service counted itself) */
  stats: () => Stats;
  /** the cloud state changed: the console reloads cloud.status / health.get */
  changed: () => void;
}

/**
 * The console's cloud actions over the CloudClient (the CloudActions port of
 * main/core/ports/cloud-port.ts): connection, license and sync here, usage
 * (cloud-usage-view.ts), quota alerts (cloud-quota-alerts.ts) and updates
 * (cloud-update-checks.ts) in their own files.
 */
export function cloudActions(d: CloudActionsDeps): CloudActions & { noticeRefusal(e: unknown): void } {
  const c = d.client;
  const usage = usageViews({ client: c, clock: d.clock, stats: d.stats, alerts: () => alerts.list() });
  const alerts = quotaAlerts({
    client: c,
    clock: d.clock,
    changed: d.changed,
    fetchedLimits: () => usage.fetchedLimits(),
  });
  const updates = updateChecks({ client: c, clock: d.clock, changed: d.changed });

  const statusView = () => ({ ...c.status(), quota_alerts: alerts.list() });
  /** Whatever the request did, the console reloads the cloud state. */
  const thenChanged = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } finally {
      d.changed();
    }
  };
  const licenseAnswer = (r: CloudLicenseAnswer): CloudLicenseAnswer => {
    d.changed();
    return { license: r.license, request_id: r.request_id };
  };

  return {
    connected: () => c.connected(),
    health: () => c.status().health,
    status: statusView,
    cachedUsage: () => usage.cached(),
    noticeRefusal: (e) => alerts.notice(e),

    'cloud.status': async () => statusView(),
    'cloud.connect': (i) =>
      thenChanged(() =>
        c.connect({
          url: i.url,
          environment: i.environment,
          ...(i.public_key ? { publicKey: i.public_key } : {}),
          ...(i.name ? { name: i.name } : {}),
        }),
      ),
    'cloud.activate': async (i) => licenseAnswer(await c.activate(i.license_key)),
    'cloud.deactivate': async () => licenseAnswer(await c.deactivate()),
    'cloud.sync': () =>
      thenChanged(async () => {
        const r = await c.sync('interactive');
        return {
          outbox: {
            ok: r.outbox.ok,
            sent: r.outbox.sent,
            remaining: r.outbox.remaining,
            error: r.outbox.ok ? null : asFailure(r.outbox.error),
          },
          certificate: r.certificate,
          request_id: r.request_id,
        };
      }),
    'cloud.disconnect': () =>
      thenChanged(async () => {
        const r = await c.disconnect();
        // the old site's figures, alerts and update checks are not the next one's
        usage.reset();
        alerts.reset();
        updates.reset();
        return r;
      }),
    'cloud.usage': (i) => usage.fetch(i),
    'updates.status': async () => updates.view(),
    'updates.check': (i) => updates.check(i),
  };
}
