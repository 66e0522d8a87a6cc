import {
  ACCOUNT_ENDPOINTS,
  AI_MAX_BODY_BYTES,
  CLOUD_BASE_PATH,
  CLOUD_ENDPOINTS,
  CLOUD_MAX_BODY_BYTES,
  CLOUD_AI_UPDATES_ENDPOINTS,
} from '../../main/contract/cloud/index.ts';
import { Router } from '../../main/lib/http/router.ts';
import type { Auth, Entry } from './cloud-request.ts';
import { ACCOUNT_ROUTES } from './routes-account.ts';
import { AI_UPDATES_ROUTES } from './routes-ai-updates.ts';
import { health, keys, live, metrics, PROBE_PATHS, ready } from './routes-probes.ts';
import { ROUTES, type RouteHandler } from './routes.ts';
import { clientMetadata } from './routes-client-metadata.ts';
import { CLIENT_METADATA_PATH } from '../../main/contract/oauth.ts';

/** Every route of the gateway, from the contract's endpoint tables, plus the probes at the root. */
export function routeTable(stopping: () => boolean, publicUrl?: string): Router<Entry> {
  const router = new Router<Entry>();
  const add = (
    name: string,
    method: string,
    path: string,
    template: string,
    auth: Auth,
    handler: RouteHandler,
    maxBody = CLOUD_MAX_BODY_BYTES,
  ) => router.on(method, path, { name, template, auth, maxBody, handler, watchClose: name === 'aiGenerate' });
  const api = (
    name: string,
    e: { method: string; path: string },
    auth: Auth,
    handler: RouteHandler,
    maxBody?: number,
  ) => add(name, e.method, `${CLOUD_BASE_PATH}/${e.path}`, e.path, auth, handler, maxBody);
  const probes: Record<string, RouteHandler> = { health, keys };
  for (const [name, e] of Object.entries(CLOUD_ENDPOINTS))
    api(name, e, e.signed ? 'site' : 'none', probes[name] ?? ROUTES[name as keyof typeof ROUTES]);
  for (const [name, e] of Object.entries(CLOUD_AI_UPDATES_ENDPOINTS)) {
    const big = name === 'aiGenerate' || name === 'aiRoute';
    api(
      name,
      e,
      e.signed ? 'site' : 'token',
      AI_UPDATES_ROUTES[name as keyof typeof AI_UPDATES_ROUTES],
      big ? AI_MAX_BODY_BYTES : CLOUD_MAX_BODY_BYTES,
    );
  }
  for (const [name, e] of Object.entries(ACCOUNT_ENDPOINTS))
    api(name, e, 'account', ACCOUNT_ROUTES[name as keyof typeof ACCOUNT_ROUTES]);
  add('live', 'GET', PROBE_PATHS.live, PROBE_PATHS.live, 'none', live);
  add('ready', 'GET', PROBE_PATHS.ready, PROBE_PATHS.ready, 'none', ready(stopping));
  add('metrics', 'GET', PROBE_PATHS.metrics, PROBE_PATHS.metrics, 'none', metrics, 0);
  add('clientMetadata', 'GET', CLIENT_METADATA_PATH, CLIENT_METADATA_PATH, 'none', clientMetadata(publicUrl), 0);
  return router;
}
