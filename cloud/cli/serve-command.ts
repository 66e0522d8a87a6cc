import { DEFAULT_DRAIN_MS, startCloudService } from '../service.ts';
import type { Logger } from '../../main/lib/logger.ts';
import { stopOnSignals } from '../../main/lib/cli-kit.ts';
import { intFlag, out, parse, resolveCloudDataDir, resolveDatabaseUrl, UsageError } from './args.ts';

export const DEFAULT_CLOUD_PORT = 8787;
/** a Bearer token for /metrics (an environment variable: a flag would show in the process list) */
export const METRICS_TOKEN_ENV = 'GATEHOUSE_CLOUD_METRICS_TOKEN';

/** `gatehouse-cloud serve`: the service in the foreground until SIGINT/SIGTERM. */
export async function serve(args: string[], env: NodeJS.ProcessEnv, log: Logger): Promise<void> {
  const { values, positionals } = parse(args, {
    host: { type: 'string' },
    port: { type: 'string' },
    'trust-proxy': { type: 'boolean' },
    'rate-limit-address': { type: 'string' },
    'rate-limit-site': { type: 'string' },
    'rate-limit-register': { type: 'string' },
    'public-url': { type: 'string' },
    'log-retention-days': { type: 'string' },
    'drain-seconds': { type: 'string' },
    'max-connections-per-address': { type: 'string' },
  });
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const port = intFlag('port', values.port, 0, 65535) ?? DEFAULT_CLOUD_PORT;
  const dataDir = resolveCloudDataDir(values['data-dir'], env);
  const rateLimits = Object.fromEntries(
    Object.entries({
      perAddress: intFlag('rate-limit-address', values['rate-limit-address'], 0, 1_000_000),
      perSite: intFlag('rate-limit-site', values['rate-limit-site'], 0, 1_000_000),
      register: intFlag('rate-limit-register', values['rate-limit-register'], 0, 1_000_000),
    }).filter(([, v]) => v !== undefined),
  );
  const publicUrl = values['public-url'];
  if (publicUrl !== undefined && !/^https?:\/\/[^/?#\s]+$/.test(publicUrl))
    throw new UsageError(
      '--public-url is the scheme and host the sites reach the gateway at, like https://gateway.example (no path)',
    );
  const retention = intFlag('log-retention-days', values['log-retention-days'], 1, 3650);
  const drainMs = (intFlag('drain-seconds', values['drain-seconds'], 0, 300) ?? DEFAULT_DRAIN_MS / 1000) * 1000;
  const svc = await startCloudService({
    dataDir,
    databaseUrl: resolveDatabaseUrl(values['database-url'], env),
    host: values.host ?? '127.0.0.1',
    port,
    log,
    env,
    rateLimits,
    trustProxy: !!values['trust-proxy'],
    publicUrl,
    releasesDir: values['releases-dir'],
    metricsToken: env[METRICS_TOKEN_ENV] || undefined,
    drainMs,
    // Behind a proxy every client shares its address: raise the cap or switch it off (0) there.
    serverLimits: {
      maxConnectionsPerAddress: intFlag(
        'max-connections-per-address',
        values['max-connections-per-address'],
        0,
        100_000,
      ),
    },
    ...(retention ? { requestLog: { retentionDays: retention } } : {}),
  });
  // The drain, then cut requests releasing their holds, then the flush: a stop past all that has hung.
  stopOnSignals(() => svc.stop(), log, drainMs + 10_000);
  const info = {
    base_url: svc.baseUrl,
    gateway_url: `${svc.baseUrl}/gateway/v1`,
    database: svc.ctx.db.kind,
    data_dir: dataDir,
    pid: process.pid,
  };
  out(!!values.json, info, () =>
    [
      `gatehouse-cloud is running.`,
      `  gateway:  ${info.gateway_url}`,
      `  database: ${info.database}${info.database === 'pglite' ? ` (embedded, ${dataDir})` : ''}`,
      'Stop with Ctrl+C.',
    ].join('\n'),
  );
}
