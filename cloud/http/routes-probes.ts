import { HttpError } from '../../main/lib/http/http-error.ts';
import { VERSION } from '../../main/version.ts';
import { DB_RETRY_AFTER_S } from '../db/db-unavailable.ts';
import { MIGRATIONS } from '../db/migrations/index.ts';
import { METRICS_CONTENT_TYPE, renderMetrics } from '../metrics.ts';
import type { Ctx } from '../services/context.ts';
import type { RouteHandler } from './routes.ts';

/** Root paths for orchestrators and scrapers, outside the API's /gateway/v1 (no signature, no envelope on success). */
export const PROBE_PATHS = { live: '/health/live', ready: '/health/ready', metrics: '/metrics' } as const;

const NEWEST_SCHEMA = MIGRATIONS.at(-1)?.version ?? 0;

/** Why the instance cannot serve, or null: the database unreachable, or its schema not the one this code needs. */
async function notReady(ctx: Ctx): Promise<string | null> {
  try {
    const { rows } = await ctx.db.query<{ v: number | null }>('SELECT max(version) AS v FROM cloud_schema_migrations');
    const v = rows[0]?.v ?? 0;
    return v === NEWEST_SCHEMA
      ? null
      : `the database schema is version ${v}, this gatehouse-cloud needs ${NEWEST_SCHEMA}`;
  } catch {
    return 'this instance cannot reach its database';
  }
}

const unavailable = (why: string) =>
  new HttpError('gateway_unavailable', why, { status: 503, headers: { 'Retry-After': String(DB_RETRY_AFTER_S) } });

/** `GET /gateway/v1/health`: a load balancer's probe in the API's own shape; 503 when the database is away. */
export const health: RouteHandler = async ({ ctx }) => {
  const why = await notReady(ctx);
  if (why) throw unavailable(why);
  return {
    body: {
      success: true,
      status: 'ok',
      version: VERSION,
      database: ctx.db.kind,
      server_time: ctx.now().toISOString(),
    },
  };
};

export const keys: RouteHandler = async ({ ctx }) => ({ body: await ctx.keys.jwks(ctx.now()) });

/** `GET /health/live`: the process answers (an orchestrator restarts it when not). Never touches the database. */
export const live: RouteHandler = async () => ({ body: { status: 'live', version: VERSION } });

/** `GET /health/ready`: the database is reachable and migrated (traffic may come); 503 otherwise, or while stopping. */
export function ready(stopping: () => boolean): RouteHandler {
  return async ({ ctx }) => {
    if (stopping()) throw unavailable('this instance is stopping');
    const why = await notReady(ctx);
    if (why) throw unavailable(why);
    return { body: { status: 'ready', database: ctx.db.kind } };
  };
}

/** `GET /metrics` (Prometheus text); who may read it is the metricsAccess guard's decision. */
export const metrics: RouteHandler = async () => ({
  raw: { contentType: METRICS_CONTENT_TYPE, text: await renderMetrics() },
});
