import type { LimitState } from '../contract/cloud/usage.ts';
import type { CloudFailure, CloudLicenseAnswer, CloudUsageView, UpdatesView } from '../contract/cloud-actions.ts';
import { QUOTA_NEAR_SHARE, QuotaAlert } from '../contract/cloud-actions.ts';
import type { Stats } from '../contract/audit.ts';
import { APP_PRODUCT } from '../contract/cloud/updates.ts';
import type { CloudActions } from '../core/cloud-port.ts';
import type { Clock } from '../lib/clock.ts';
import { compareVersions } from '../lib/version-order.ts';
import { VERSION } from '../version.ts';
import type { CloudClient } from './cloud-client.ts';
import { failure } from './cloud-client-types.ts';
import { isCloudClientError } from './errors.ts';
import { counterKey } from './outbox-answers.ts';

const DAY = 24 * 3600_000;
const MAX_REFUSAL_ALERTS = 20;

export interface CloudActionsDeps {
  client: CloudClient;
  clock: Clock;
  /** the local counters (what this service counted itself) */
  stats: () => Stats;
  /** the cloud state changed: the console reloads cloud.status / health.get */
  changed: () => void;
}

const asFailure = (e: unknown): CloudFailure => {
  const { code, message, request_id } = failure(e);
  return { code, message, request_id };
};

const NO_UPDATES: Omit<UpdatesView, 'connected' | 'current_version'> = { channel: null, eligible: null, checked_at: null, latest_version: null, update_available: false, release: null, refused: null, error: null };

const LEVEL_RANK = { exceeded: 2, near: 1 } as const;

/** Alerts about one counter (scope, subject, metric, period) become one: the worse level, then the newer word. */
export function onePerCounter(alerts: readonly QuotaAlert[]): QuotaAlert[] {
  const byCounter = new Map<string, QuotaAlert>();
  for (const a of alerts) {
    // a refusal that does not name its subject or period (an older gateway's error) stands for its scope's counter of that metric
    const key = [...byCounter.keys()].find((k) => sameCounter(byCounter.get(k)!, a)) ?? counterKey(a);
    const held = byCounter.get(key);
    if (!held || LEVEL_RANK[a.level] > LEVEL_RANK[held.level] || (a.level === held.level && a.seen_at > held.seen_at)) byCounter.set(key, a);
  }
  return [...byCounter.values()];
}

const sameCounter = (x: QuotaAlert, y: QuotaAlert): boolean =>
  x.scope === y.scope && x.metric === y.metric && (x.subject === null || y.subject === null || x.subject === y.subject) && (x.period === null || y.period === null || x.period === y.period);

const platformOf = (): 'win' | 'mac' | 'linux' => (process.platform === 'win32' ? 'win' : process.platform === 'darwin' ? 'mac' : 'linux');

/**
 * The console's cloud actions over the CloudClient (the CloudActions port of
 * main/core/cloud-port.ts): maps its answers to the action shapes of
 * main/contract/cloud-actions.ts, keeps the last usage figures for when the
 * gateway cannot be asked, and turns limits and quota refusals into alerts.
 */
export function cloudActions(d: CloudActionsDeps): CloudActions & { noticeRefusal(e: unknown): void } {
  const c = d.client;
  const iso = (t: number) => new Date(t).toISOString();
  let usageCache: { fetched_at: string; limits: LimitState[]; summary: CloudUsageView['summary']; history: CloudUsageView['history'] } | null = null;
  let refusals: QuotaAlert[] = [];
  let updates = NO_UPDATES;

  /** One alert per counter: a refusal (a call's, or events' at upload) and the limits as last fetched; the worse wins, then the newer word. */
  const alerts = (): QuotaAlert[] => {
    const now = d.clock.now();
    refusals = refusals.filter((a) => Date.parse(a.reset_at) > now);
    const fromEvents = c.usage.quotaRefusals().flatMap(({ quota: q, seen_at }) => {
      const a = QuotaAlert.safeParse({ level: 'exceeded', ...q, source: 'refusal', seen_at });
      return a.success ? [a.data] : [];
    });
    const fromLimits: QuotaAlert[] = (usageCache?.limits ?? []).flatMap((l) => {
      if (l.limit <= 0 || Date.parse(l.reset_at) <= now) return [];
      const used = l.used + l.reserved;
      const level = used >= l.limit ? 'exceeded' : used >= l.limit * QUOTA_NEAR_SHARE ? 'near' : null;
      return level ? [{ level, scope: l.scope, subject: l.subject, metric: l.metric, period: l.period, limit: l.limit, used, reset_at: l.reset_at, source: 'limits' as const, seen_at: usageCache!.fetched_at }] : [];
    });
    return onePerCounter([...refusals, ...fromEvents, ...fromLimits]);
  };

  const local = () => {
    const s = d.stats();
    return { since: s.since, usage: s.usage };
  };

  const usageView = (source: CloudUsageView['source'], error: CloudFailure | null): CloudUsageView => ({
    connected: c.connected(),
    source,
    fetched_at: usageCache?.fetched_at ?? null,
    limits: usageCache?.limits ?? [],
    summary: usageCache?.summary ?? null,
    history: usageCache?.history ?? [],
    local: local(),
    outbox: c.usage.view(),
    quota_alerts: alerts(),
    error,
  });

  const statusView = () => ({ ...c.status(), quota_alerts: alerts() });
  const updatesView = (): UpdatesView => ({ connected: c.connected(), current_version: VERSION, ...updates });

  const licenseAnswer = (r: CloudLicenseAnswer): CloudLicenseAnswer => {
    d.changed();
    return { license: r.license, request_id: r.request_id };
  };

  return {
    connected: () => c.connected(),
    health: () => c.status().health,
    status: () => statusView(),
    'cloud.status': async () => statusView(),

    async 'cloud.connect'(i) {
      try {
        return await c.connect({ url: i.url, environment: i.environment, ...(i.public_key ? { publicKey: i.public_key } : {}), ...(i.name ? { name: i.name } : {}) });
      } finally {
        d.changed();
      }
    },
    'cloud.activate': async (i) => licenseAnswer(await c.activate(i.license_key)),
    'cloud.deactivate': async () => licenseAnswer(await c.deactivate()),
    async 'cloud.sync'() {
      try {
        const r = await c.sync('interactive');
        return { outbox: { ok: r.outbox.ok, sent: r.outbox.sent, remaining: r.outbox.remaining, error: r.outbox.ok ? null : asFailure(r.outbox.error) }, certificate: r.certificate, request_id: r.request_id };
      } finally {
        d.changed();
      }
    },
    async 'cloud.disconnect'() {
      try {
        const r = await c.disconnect();
        // the old site's figures, alerts and update checks are not the next one's
        usageCache = null;
        refusals = [];
        updates = NO_UPDATES;
        return r;
      } finally {
        d.changed();
      }
    },

    async 'cloud.usage'(i) {
      const api = c.api;
      if (!api) return usageView('local', null);
      const now = d.clock.now();
      try {
        const [limits, summary, history] = await Promise.all([
          api.usageLimits(),
          api.usageSummary({ period: i.period }),
          api.usageHistory({ period: 'day', from: iso(now - (i.days - 1) * DAY - (now % DAY)), limit: 500 }),
        ]);
        const { success: _s, site_id: _id, limits: _l, ...sum } = summary.data;
        usageCache = { fetched_at: iso(now), limits: limits.data.limits, summary: sum, history: history.data.items };
        return usageView('cloud', null);
      } catch (e) {
        return usageView(usageCache ? 'cached' : 'local', asFailure(e));
      }
    },
    cachedUsage: () => usageView(c.connected() ? (usageCache ? 'cached' : 'local') : 'local', null),

    'updates.status': async () => updatesView(),
    async 'updates.check'(i) {
      const api = c.api;
      const checked_at = iso(d.clock.now());
      const channel = i.channel ?? c.status().certificate?.update.channel ?? null;
      if (!api) {
        updates = { ...updates, checked_at, channel, error: { code: 'invalid_site', message: 'this service is not connected to a cloud gateway: connect it first (gatehouse cloud connect --url GATEWAY_URL)', request_id: null } };
        return updatesView();
      }
      try {
        const ans = (await api.updatesCheck({ product: APP_PRODUCT, version: VERSION, ...(i.channel ? { channel: i.channel } : {}), platform: platformOf() })).data;
        let release: UpdatesView['release'] = null;
        let refused: string | null = null;
        if (ans.manifest) {
          const opened = c.openManifest(ans.manifest);
          if (!opened.ok) refused = `the release manifest did not verify against the pinned gateway key (${opened.reason}); no update is offered`;
          else if (opened.payload.product !== APP_PRODUCT) {
            // The gateway signs every product's releases with one key: a valid signature does not make it ours.
            refused = `the signed release manifest is for the product '${opened.payload.product}', not '${APP_PRODUCT}'; no update is offered`;
          } else if (channel !== null && opened.payload.channel !== channel) {
            // The answer's own `channel` is not signed: the channel asked for, or the signed certificate's, is the one that counts.
            refused = `the signed release manifest is for the '${opened.payload.channel}' channel, not '${channel}'; no update is offered`;
          } else {
            const m = opened.payload;
            release = { version: m.version, channel: m.channel, released_at: m.released_at, notes: m.notes, files: m.files.map(({ name, platform, arch, size }) => ({ name, platform, arch, size })) };
          }
        }
        // Only a strictly newer version is an update: an older signed manifest replayed (or an equal one) would be a downgrade or a loop.
        const newer = release !== null && compareVersions(release.version, VERSION) > 0;
        if (ans.update_available && release && !newer) refused = `the gateway offered version ${release.version}, which is not newer than the running ${VERSION} (an old signed manifest replayed?); no update is offered`;
        const offered = ans.update_available && newer;
        updates = { channel: channel ?? ans.channel, eligible: ans.eligible, checked_at, latest_version: release?.version ?? null, update_available: offered, release, refused, error: null };
      } catch (e) {
        updates = { ...updates, channel, checked_at, error: asFailure(e) };
      }
      d.changed();
      return updatesView();
    },

    /** A quota_exceeded seen on a call (AI, usage upload): an alert until its reset. */
    noticeRefusal(e: unknown) {
      if (!isCloudClientError(e) || e.cloudCode !== 'quota_exceeded') return;
      const x = e.info.details ?? {};
      const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0);
      const str = (v: unknown) => (typeof v === 'string' ? v.slice(0, 100) : null);
      const parsed = QuotaAlert.safeParse({
        level: 'exceeded',
        scope: str(x.scope) ?? 'site',
        subject: str(x.subject),
        metric: str(x.metric),
        period: str(x.period),
        limit: num(x.limit),
        used: num(x.used),
        reset_at: str(x.reset_at) ?? iso(d.clock.now() + DAY),
        source: 'refusal',
        seen_at: iso(d.clock.now()),
      });
      if (!parsed.success) return;
      const alert = parsed.data;
      refusals = [alert, ...refusals.filter((a) => !(a.scope === alert.scope && a.metric === alert.metric))].slice(0, MAX_REFUSAL_ALERTS);
      d.changed();
    },
  };
}
