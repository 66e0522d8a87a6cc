import type { Counter, Histogram, Registry } from 'prom-client';

/**
 * The gateway's Prometheus metrics, process-wide, behind named recording
 * functions (one-line calls at the points that count). prom-client is loaded
 * on the first scrape, not at start: a gateway nobody scrapes pays nothing
 * (start-up time, RSS), and until then every recording function is a no-op,
 * so counters start at the first scrape (Prometheus's rate() treats that as
 * a process start). Gauges (pool, open holds) are read when scraped.
 */
interface Instruments {
  registry: Registry;
  requests: Counter<'route' | 'method' | 'status'>;
  latency: Histogram<'route'>;
  dbErrors: Counter<'kind'>;
  quotaRefusals: Counter<'metric'>;
  providerCalls: Counter<'provider' | 'outcome'>;
  usageEvents: Counter;
}

export interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
}

/** What the gauges read at scrape time; each service registers its own and removes it when it stops. */
export interface GaugeSource {
  pool?: () => PoolUse | null;
  openHolds?: () => Promise<number>;
}

let instruments: Instruments | null = null;
let loading: Promise<Instruments> | null = null;
const sources = new Set<GaugeSource>();

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** One answered request: its route template (never the raw path), status and time. */
export function recordRequest(route: string, method: string, status: number, seconds: number): void {
  if (!instruments) return;
  instruments.requests.inc({ route, method, status: String(status) });
  instruments.latency.observe({ route }, seconds);
}

/** A database error: `connection` (the server away) or `query` (a statement failed). */
export function recordDbError(kind: 'connection' | 'query'): void {
  instruments?.dbErrors.inc({ kind });
}

/** A request refused with quota_exceeded, by the metric whose limit was reached. */
export function recordQuotaRefusal(metric: string): void {
  instruments?.quotaRefusals.inc({ metric });
}

/** One call to an AI provider and whether it answered. */
export function recordProviderCall(provider: string, outcome: 'ok' | 'error'): void {
  instruments?.providerCalls.inc({ provider, outcome });
}

/** Usage events newly stored (duplicates and rejections not counted). */
export function recordUsageEvents(n: number): void {
  if (n > 0) instruments?.usageEvents.inc(n);
}

export function addGaugeSource(s: GaugeSource): () => void {
  sources.add(s);
  return () => void sources.delete(s);
}

/** The exposition text; loads prom-client on the first call. */
export async function renderMetrics(): Promise<string> {
  const i = instruments ?? (await (loading ??= load()));
  return i.registry.metrics();
}

async function load(): Promise<Instruments> {
  const prom = await import('prom-client');
  const registry = new prom.Registry();
  new prom.Gauge({
    name: 'gatehouse_cloud_db_pool_connections',
    help: 'PostgreSQL pool connections by state (total, idle, waiting requests); absent on PGlite',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.reset();
      const uses = [...sources].map((s) => s.pool?.()).filter((u): u is PoolUse => !!u);
      for (const state of ['total', 'idle', 'waiting'] as const)
        if (uses.length)
          this.set(
            { state },
            uses.reduce((n, u) => n + u[state], 0),
          );
    },
  });
  new prom.Gauge({
    name: 'gatehouse_cloud_ai_holds_open',
    help: 'AI budget holds still held (database-wide)',
    registers: [registry],
    async collect() {
      // Every source reads the same kind of count; with several services in one process (tests) the largest is shown.
      const counts = await Promise.all([...sources].map((s) => s.openHolds?.().catch(() => null)));
      this.set(Math.max(0, ...counts.filter((n): n is number => typeof n === 'number')));
    },
  });
  instruments = {
    registry,
    requests: new prom.Counter({
      name: 'gatehouse_cloud_http_requests_total',
      help: 'Answered requests by route template, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    }),
    latency: new prom.Histogram({
      name: 'gatehouse_cloud_http_request_duration_seconds',
      help: 'Time from the request to its answer, by route template',
      labelNames: ['route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    dbErrors: new prom.Counter({
      name: 'gatehouse_cloud_db_errors_total',
      help: 'Database errors: connection (the server away) or query',
      labelNames: ['kind'],
      registers: [registry],
    }),
    quotaRefusals: new prom.Counter({
      name: 'gatehouse_cloud_quota_refusals_total',
      help: 'Requests refused with quota_exceeded, by metric',
      labelNames: ['metric'],
      registers: [registry],
    }),
    providerCalls: new prom.Counter({
      name: 'gatehouse_cloud_provider_calls_total',
      help: 'Calls to AI providers by provider id and outcome',
      labelNames: ['provider', 'outcome'],
      registers: [registry],
    }),
    usageEvents: new prom.Counter({
      name: 'gatehouse_cloud_usage_events_recorded_total',
      help: 'Usage events newly stored',
      registers: [registry],
    }),
  };
  return instruments;
}
