import { createLogger } from '../lib/logger.ts';
import { DEFAULT_PORT } from '../contract/health.ts';
import { startService } from '../service.ts';
import { VERSION } from '../version.ts';
import { retryWhileLocked } from './connect.ts';
import { stopOnSignals } from '../lib/cli-kit.ts';
import { UsageError } from './output.ts';
import { dataDirOf, out, parse, vaultChoice } from './args.ts';
import { USAGE } from './usage.ts';

/** `gatehouse serve`: the headless service in the foreground, stopped by SIGINT/SIGTERM. */
export async function serve(args: string[]): Promise<void> {
  const { values } = parse(args, {
    host: { type: 'string' },
    port: { type: 'string' },
    enable: { type: 'boolean' },
    'max-connections': { type: 'string' },
  });
  if (values.help) return void console.log(USAGE);
  const maxConnections = values['max-connections'] === undefined ? undefined : Number(values['max-connections']);
  if (
    maxConnections !== undefined &&
    (!Number.isInteger(maxConnections) || maxConnections < 1 || maxConnections > 65_536)
  )
    throw new UsageError(`--max-connections must be a number from 1 to 65536 (got '${values['max-connections']}')`);
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a number from 0 to 65535 (got '${values.port}')`);
  const dataDir = dataDirOf(values);
  const log = createLogger({ level: (values['log-level'] as 'info') ?? 'info' });
  // A CLI command holding the lock finishes in a moment: wait for it. Another service never lets go: fail at once.
  const lifetime = testStagedLifetime(process.env);
  // For tests only: the sign-in callback on a port the test picked, so test files running at once never meet on 47823.
  const callbackPort = Number(process.env.GATEHOUSE_TEST_OAUTH_CALLBACK_PORT) || 0;
  const backoff = testUpstreamBackoff(process.env);
  const svc = await retryWhileLocked(
    () =>
      startService({
        dataDir,
        host: values.host ?? '127.0.0.1',
        port,
        vault: vaultChoice(values.vault),
        log,
        ...(values.enable ? { enable: true } : {}),
        ...(maxConnections ? { limits: { maxConnections } } : {}),
        ...(lifetime ? { stagedLifetimeMs: lifetime } : {}),
        upstreams: {
          ...(callbackPort > 0 && callbackPort < 65536 ? { oauth: { callbackPorts: [callbackPort] } } : {}),
          ...(backoff ? { backoff } : {}),
        },
      }),
    {
      wait: (e) => e.details.owner === 'cli',
    },
  );
  // The stop must finish within 2 s (with a margin for the exit itself).
  stopOnSignals(() => svc.stop(), log, 1900);
  // Data that had to be salvaged or moved aside is said here too, not only in the log and the console.
  const warnings = svc.core
    .health()
    .warnings.filter((w) => ['store_salvaged', 'store_corrupt', 'upstream_set_aside'].includes(w.code));
  const info = {
    base_url: svc.baseUrl,
    mcp_url: svc.mcpUrl,
    console_login_url: svc.loginUrl(),
    data_dir: dataDir,
    vault: svc.vaultLabel,
    enabled: svc.core.settings.get().enabled,
    pid: process.pid,
    ...(warnings.length ? { warnings } : {}),
  };
  out(!!values.json, info, () =>
    [
      `Gatehouse ${VERSION} is running.`,
      `  base URL:      ${info.base_url}`,
      `  MCP endpoint:  ${info.mcp_url}`,
      `  console login: ${info.console_login_url}   (one-time link)`,
      `  data dir:      ${info.data_dir}`,
      `  vault:         ${info.vault}`,
      `  gateway:       ${info.enabled ? 'on' : 'off (switch on: gatehouse settings set enabled true, or serve --enable)'}`,
      ...warnings.map((w) => `  WARNING:       ${w.message}`),
      'Stop with Ctrl+C.',
    ].join('\n'),
  );
}

/**
 * GATEHOUSE_TEST_STAGED_LIFETIME_MS: for tests only (the crash test checks
 * expiry across restarts without waiting 15 minutes). It can only shorten
 * the lifetime; the staging core ignores anything longer.
 */
function testStagedLifetime(env: NodeJS.ProcessEnv): number | null {
  const raw = env.GATEHOUSE_TEST_STAGED_LIFETIME_MS;
  if (raw === undefined || raw === '') return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1000)
    throw new UsageError(
      `GATEHOUSE_TEST_STAGED_LIFETIME_MS must be a whole number of milliseconds, at least 1000 (got '${raw}')`,
    );
  return n;
}

/**
 * GATEHOUSE_TEST_UPSTREAM_BACKOFF_MS: for tests only (an upstream that comes back is reconnected without
 * waiting out the 30 s cap of the reconnect backoff). It can only shorten the backoff.
 */
function testUpstreamBackoff(env: NodeJS.ProcessEnv): { baseMs: number; maxMs: number } | null {
  const raw = env.GATEHOUSE_TEST_UPSTREAM_BACKOFF_MS;
  if (raw === undefined || raw === '') return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 10 || n > 30_000)
    throw new UsageError(
      `GATEHOUSE_TEST_UPSTREAM_BACKOFF_MS must be a whole number of milliseconds from 10 to 30000 (got '${raw}')`,
    );
  return { baseMs: Math.min(500, n), maxMs: n };
}
