import { FEATURE_PLANS } from '../../contract/entitlements.ts';
import type { ActionDeps, Handler } from './action-types.ts';
import { GatehouseError } from '../errors.ts';

const NOT_CONNECTED =
  'no cloud gateway is connected, so licenses run on the local free plan: connect one with `gatehouse cloud connect --url GATEWAY_URL`';
/** How long a client should wait before asking a disconnected cloud again. */
const RETRY_AFTER_S = 3600;

/**
 * Seed part C, the local REST a dashboard reads instead of calling the cloud:
 * answers from the cloud client's state (no request for the GETs, which
 * manage_options tokens may read) and passes activate, deactivate and sync
 * (people only) to it. Unconnected: the local free plan and local counters.
 */
export function createProHandlers(deps: Pick<ActionDeps, 'cloud' | 'entitlements' | 'stats' | 'cloudActions'>): {
  'pro.cloudStatus': Handler<'pro.cloudStatus'>;
  'pro.license': Handler<'pro.license'>;
  'pro.entitlements': Handler<'pro.entitlements'>;
  'pro.usage': Handler<'pro.usage'>;
  'pro.licenseActivate': Handler<'pro.licenseActivate'>;
  'pro.licenseDeactivate': Handler<'pro.licenseDeactivate'>;
  'pro.cloudSync': Handler<'pro.cloudSync'>;
} {
  const connected = () => deps.cloudActions?.connected() === true;
  const cloud = () => {
    if (!deps.cloudActions)
      throw new GatehouseError(
        'gateway_unavailable',
        'the cloud client is not running in this process: start the service (gatehouse serve)',
        { retry_after: RETRY_AFTER_S },
      );
    return deps.cloudActions;
  };
  return {
    'pro.cloudStatus': async () => deps.cloud(),
    'pro.license': async () => {
      if (!connected())
        return {
          success: true,
          license: { status: 'none', plan: 'free', site_bound: false, expires_at: null },
          message: NOT_CONNECTED,
        };
      const s = deps.cloudActions!.status();
      const l = s.certificate?.license ?? null;
      return {
        success: true,
        license: {
          status: l?.status ?? 'none',
          plan: l?.plan ?? 'free',
          site_bound: true,
          expires_at: l?.expires_at ?? null,
          key_preview: l?.key_preview ?? null,
        },
        site_id: s.site_id,
        gateway_url: s.gateway_url,
        certificate: s.certificate
          ? {
              cert_expires_at: s.certificate.cert_expires_at,
              grants_until: s.certificate.grants_until,
              usable: s.certificate.usable,
              reason: s.certificate.reason,
            }
          : null,
      };
    },
    'pro.entitlements': async () => {
      const source = deps.entitlements();
      const entitlements = await Promise.all(Object.keys(FEATURE_PLANS).map((f) => source.check(f)));
      return { success: true, source: connected() ? 'certificate' : 'local-policy', entitlements };
    },
    'pro.usage': async () => {
      const stats = deps.stats.snapshot();
      const calls = Object.values(stats.tools).reduce(
        (n, byResult) => n + Object.values(byResult).reduce((a, b) => a + b, 0),
        0,
      );
      const local = {
        success: true as const,
        source: 'local',
        since: stats.since,
        mcp_calls: calls,
        by_tool: stats.tools,
        usage: stats.usage,
      };
      if (!connected())
        return { ...local, limits: [], message: 'quotas come from the cloud gateway, which is not connected' };
      const u = deps.cloudActions!.cachedUsage();
      return {
        ...local,
        source: u.fetched_at ? 'cloud-cached' : 'local',
        limits: u.limits,
        fetched_at: u.fetched_at,
        outbox: u.outbox,
        quota_alerts: u.quota_alerts,
      };
    },
    'pro.licenseActivate': async (input) => ({
      success: true,
      ...(await cloud()['cloud.activate']({ license_key: input.license_key })),
    }),
    'pro.licenseDeactivate': async () => ({ success: true, ...(await cloud()['cloud.deactivate']({})) }),
    'pro.cloudSync': async () => ({ success: true, ...(await cloud()['cloud.sync']({})) }),
  };
}
