import type { IncomingMessage, ServerResponse } from 'node:http';
import { FEATURE_PLANS } from '../contract/entitlements.ts';
import type { CloudHealth } from '../contract/health.ts';
import type { EntitlementSource } from '../core/ports.ts';
import type { StatsRecorder } from '../core/stats.ts';
import type { AdminAuth } from './admin-auth.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { Router } from '../lib/http/router.ts';
import { sendJson } from '../lib/http/send.ts';
import { admitAdmin } from './admin-guard.ts';

export interface ProRoutesDeps {
  auth: AdminAuth;
  origin: () => string;
  cloud: () => CloudHealth;
  entitlements: () => EntitlementSource;
  stats: StatsRecorder;
}

const NOT_CONNECTED = 'no cloud gateway is connected: the cloud client is not configured yet, so licenses run on the local free plan';

type Handler = (res: ServerResponse) => Promise<void> | void;

/**
 * Seed part C, the local REST a dashboard reads instead of calling the cloud.
 * Until the cloud client exists these answer with the real local state (free
 * plan, local usage counters) and refuse cloud actions with gateway_unavailable.
 */
export function createProRoutes(deps: ProRoutesDeps) {
  const notConnected: Handler = (res) => sendJson(res, 503, { success: false, error: { code: 'gateway_unavailable', message: NOT_CONNECTED, retryable: false } }, { 'Retry-After': '3600' });
  const routes = new Router<Handler>()
    .get('pro/cloud/status', (res) => sendJson(res, 200, deps.cloud()))
    .get('pro/license', (res) => sendJson(res, 200, { success: true, license: { status: 'none', plan: 'free', site_bound: false, expires_at: null }, message: NOT_CONNECTED }))
    .get('pro/entitlements', async (res) => {
      const source = deps.entitlements();
      const entitlements = await Promise.all(Object.keys(FEATURE_PLANS).map((f) => source.check(f)));
      sendJson(res, 200, { success: true, source: 'local-policy', entitlements });
    })
    .get('pro/usage', (res) => {
      const stats = deps.stats.snapshot();
      const calls = Object.values(stats.tools).reduce((n, byResult) => n + Object.values(byResult).reduce((a, b) => a + b, 0), 0);
      sendJson(res, 200, { success: true, source: 'local', since: stats.since, mcp_calls: calls, by_tool: stats.tools, usage: stats.usage, limits: [], message: 'quotas come from the cloud gateway, which is not connected' });
    })
    .post('pro/license/activate', notConnected)
    .post('pro/license/deactivate', notConnected)
    .post('pro/cloud/sync', notConnected);

  return async function handle(req: IncomingMessage, res: ServerResponse, subpath: string): Promise<void> {
    if (!admitAdmin(req, res, deps.auth, deps.origin())) return;
    const match = routes.match(req.method ?? 'GET', subpath);
    // a known path under another method is not found either, as it always was here
    if (!match?.handler) throw new HttpError('not_found', `no route '${subpath.slice(0, 200)}'`);
    await match.handler(res);
  };
}
