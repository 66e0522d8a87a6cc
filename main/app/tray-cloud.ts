import type { CloudStatusView, QuotaAlert } from '../contract/cloud-actions.ts';
import type { HealthReport } from '../contract/health.ts';
import { quotaName } from '../contract/quota-words.ts';

/** What the tray shows of the cloud: pure data, built from cloud.status (or the health report when that cannot be read). */
export interface TrayCloud {
  connected: boolean;
  /** the most pressing cloud problem other than quotas, in words, or null */
  problem: string | null;
  /** quotas used up or nearly so, used-up ones first */
  quotas: TrayQuota[];
}

export interface TrayQuota {
  level: 'near' | 'exceeded';
  /** one quota in one period: a new period (a new reset time) is a new key */
  key: string;
  text: string;
}

export const NO_CLOUD: TrayCloud = { connected: false, problem: null, quotas: [] };

const QUOTA_CODES = new Set(['cloud_quota_exceeded', 'cloud_quota_near']);

/** Cloud warning codes the tray names; the others show as "needs attention". */
const PROBLEMS: Record<string, string> = {
  cloud_gateway_unreachable: 'the gateway cannot be reached',
  cloud_sync_failed: 'the last sync failed',
  cloud_certificate_stale: 'the certificate is getting old',
  cloud_certificate_expired: 'the certificate has expired',
  cloud_certificate_refused: 'the certificate was refused',
  cloud_certificate_missing: 'no certificate yet',
  cloud_clock_set_back: 'the clock was set back',
  cloud_outbox_full: 'the usage outbox is full',
  cloud_site_refused: 'the gateway no longer accepts this site',
  cloud_license_inactive: 'the license is not active',
};

/** "2026-12-01 00:00 UTC": the tray has no locale of its own to follow, and a fixed form reads the same everywhere. */
const when = (iso: string): string =>
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : iso;

export const quotaKey = (q: QuotaAlert): string =>
  [q.scope, q.subject ?? '', q.metric, q.period ?? '', q.reset_at].join('|');

export function trayQuota(q: QuotaAlert): TrayQuota {
  return {
    level: q.level,
    key: quotaKey(q),
    text: `${quotaName(q)} ${q.level === 'exceeded' ? 'used up' : 'nearly used up'}, resets ${when(q.reset_at)}`,
  };
}

const urgentFirst = (quotas: TrayQuota[]) =>
  [...quotas].sort((a, b) => (a.level === b.level ? 0 : a.level === 'exceeded' ? -1 : 1));

function problemOf(warnings: readonly { code: string }[]): string | null {
  const w = warnings.find((x) => x.code.startsWith('cloud_') && !QUOTA_CODES.has(x.code));
  return w ? (PROBLEMS[w.code] ?? 'needs attention') : null;
}

/** The tray's cloud part: from cloud.status when it answered, else the health report's summary and warnings. */
export function trayCloud(status: CloudStatusView | null, health: HealthReport | null): TrayCloud {
  if (status)
    return {
      connected: status.connected,
      problem: status.connected ? problemOf(status.warnings) : null,
      quotas: urgentFirst(status.quota_alerts.map(trayQuota)),
    };
  if (!health) return NO_CLOUD;
  const quotas = health.warnings
    .filter((w) => QUOTA_CODES.has(w.code))
    .map((w): TrayQuota => ({
      level: w.code === 'cloud_quota_exceeded' ? 'exceeded' : 'near',
      key: `${w.code}|${w.message}`,
      text: w.message,
    }));
  return {
    connected: health.cloud.gateway.connected,
    problem: health.cloud.gateway.connected ? problemOf(health.warnings) : null,
    quotas: urgentFirst(quotas),
  };
}

/** The tray's one cloud line. */
export function cloudLine(cloud: TrayCloud): string {
  if (!cloud.connected) return 'Cloud: not connected';
  return cloud.problem ? `Cloud: connected, but ${cloud.problem}` : 'Cloud: connected';
}

/** The tooltip's cloud part, only when a quota needs attention. */
export function quotaTooltip(cloud: TrayCloud): string | null {
  const first = cloud.quotas[0];
  if (!first) return null;
  return first.level === 'exceeded' ? 'a cloud quota is used up' : 'a cloud quota is nearly used up';
}
