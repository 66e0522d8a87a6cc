import { FEATURE_PLANS } from '../contract/entitlements.ts';
import type { ActionDeps, Handler } from './action-handlers.ts';
import { GatehouseError } from './errors.ts';

const NOT_CONNECTED = 'no cloud gateway is connected: the cloud client is not configured yet, so licenses run on the local free plan';
/** How long a client should wait before asking a disconnected cloud again. */
const RETRY_AFTER_S = 3600;

const notConnected = async (): Promise<never> => {
  throw new GatehouseError('gateway_unavailable', NOT_CONNECTED, { retry_after: RETRY_AFTER_S });
};

/**
 * Seed part C, the local REST a dashboard reads instead of calling the cloud.
 * Until the cloud client exists these answer with the real local state (free
 * plan, local usage counters) and refuse cloud actions with gateway_unavailable.
 */
export function createProHandlers(deps: Pick<ActionDeps, 'cloud' | 'entitlements' | 'stats'>): {
  'pro.cloudStatus': Handler<'pro.cloudStatus'>;
  'pro.license': Handler<'pro.license'>;
  'pro.entitlements': Handler<'pro.entitlements'>;
  'pro.usage': Handler<'pro.usage'>;
  'pro.licenseActivate': Handler<'pro.licenseActivate'>;
  'pro.licenseDeactivate': Handler<'pro.licenseDeactivate'>;
  'pro.cloudSync': Handler<'pro.cloudSync'>;
} {
  return {
    'pro.cloudStatus': async () => deps.cloud(),
    'pro.license': async () => ({ success: true, license: { status: 'none', plan: 'free', site_bound: false, expires_at: null }, message: NOT_CONNECTED }),
    'pro.entitlements': async () => {
      const source = deps.entitlements();
      const entitlements = await Promise.all(Object.keys(FEATURE_PLANS).map((f) => source.check(f)));
      return { success: true, source: 'local-policy', entitlements };
    },
    'pro.usage': async () => {
      const stats = deps.stats.snapshot();
      const calls = Object.values(stats.tools).reduce((n, byResult) => n + Object.values(byResult).reduce((a, b) => a + b, 0), 0);
      return { success: true, source: 'local', since: stats.since, mcp_calls: calls, by_tool: stats.tools, usage: stats.usage, limits: [], message: 'quotas come from the cloud gateway, which is not connected' };
    },
    'pro.licenseActivate': notConnected,
    'pro.licenseDeactivate': notConnected,
    'pro.cloudSync': notConnected,
  };
}
