import { join } from 'node:path';
import { CONSOLE_PATH, MCP_PATH } from './contract/health.ts';
import type { AiProviderSource } from './core/ports/ports.ts';
import type { Clock } from './lib/clock.ts';
import type { Logger } from './lib/logger.ts';
import type { Plugin } from './core/calls/tool.ts';
import { systemClock } from './lib/clock.ts';
import { OptionsData, emptyOptions, salvageOptions } from './core/ports/options-data.ts';
import type { EventHub } from './core/events.ts';
import { createCedarEngine } from './policy/cedar-engine.ts';
import { policyMemoFile } from './store/policy-memo-file.ts';
import { storedPolicyCheck } from './policy/stored-policy-check.ts';
import { LocalEntitlements } from './core/policy/local-entitlements.ts';
import { createClientsService } from './clients/clients-service.ts';
import type { PlaceOf } from './contract/client-locations.ts';
import { JsonFileStore } from './store/json-file-store.ts';
import { openVault, type LabelledVault, type VaultChoice } from './store/vault.ts';
import { acquireLock, startRefused, type LockHandle } from './store/process-lock.ts';
import { AuditLog } from './store/audit/log.ts';
import { createLogger } from './lib/logger.ts';
import { SiteData, emptySiteData } from './plugins/site/site-data.ts';
import { salvageSite } from './plugins/site/site-salvage.ts';
import { StagedFiles } from './store/staged-files.ts';
import type { JsonSchemaCompiler } from './core/calls/tool-schema.ts';
import { bridgeLaunchFor } from './bridge-launch.ts';
import { healthReporter } from './health-report.ts';
import { startBackgroundJobs } from './background-jobs.ts';
import { CloudClient, type CloudClientOptions } from './cloud-client/index.ts';
import type { CloudProduct } from './contract/cloud/catalog.ts';
import { UpstreamManager, type UpstreamManagerDeps } from './plugins/upstream/upstream-manager.ts';
import { cloudMetadataUrl } from './plugins/upstream/oauth/oauth-upstreams.ts';
import { UpstreamsData, emptyUpstreams } from './plugins/upstream/upstream-data.ts';
import { salvageUpstreams } from './plugins/upstream/upstreams-salvage.ts';
import { assembleCore } from './assemble-core.ts';

export { NO_AI } from './assemble-core.ts';

export interface LocalCoreConfig {
  dataDir: string;
  vault?: VaultChoice;
  clock?: Clock;
  log?: Logger;
  ai?: AiProviderSource;
  /** who holds the data dir lock while this gateway is open */
  owner?: 'service' | 'cli';
  /** how long a staged write waits for a decision (tests shorten it; never longer than 15 minutes) */
  stagedLifetimeMs?: number;
  /** log the file-vault fallback (default true; a CLI command leaves it to serve and the health report) */
  warnFileVault?: boolean;
  /** more tool plugins, registered after the built-in ones */
  plugins?: Plugin[];
  /** cloud client options (tests: a transport, timeouts, the refresh tick, the outbox's interval, a clock of its own) */
  cloud?: Partial<Omit<CloudClientOptions, 'dataDir' | 'vault' | 'log'>>;
  /** upstream MCP servers: the reconnect backoff (tests shorten it) */
  upstreams?: {
    backoff?: { baseMs: number; maxMs: number };
    /** how long each read of an upstream write's preview may take (default 5 s; tests shorten it) */
    previewReadMs?: number;
    oauth?: UpstreamManagerDeps['oauth'];
    /** the person's HOME the sandbox keeps from servers (tests: a temporary one); what the machine can do (tests) */
    sandbox?: Pick<UpstreamManagerDeps['sandbox'], 'home' | 'detect'>;
    /** the clock and timers that stop idle per-client processes (tests: moved by hand) */
    processTime?: UpstreamManagerDeps['processTime'];
  };
  /** where the MCP clients' files are looked for (tests: a throwaway HOME); default this process's HOME and folder */
  clientsPlace?: PlaceOf;
}

/**
 * The composition root without HTTP: opens the file adapters (the stores,
 * the vault, the audit log, the staged files) under the data dir's lock and
 * hands them to the one assembly (assemble-core.ts), with the cloud client
 * and the upstream servers; then starts the background jobs and recovery.
 * Used by the headless service (main/service.ts adds HTTP), the Electron
 * shell and the CLI when no service runs. "Local" as opposed to the cloud gateway.
 */
export async function openLocalCore(config: LocalCoreConfig) {
  const clock = config.clock ?? systemClock;
  const log = config.log ?? createLogger();
  const lock: LockHandle = await acquireLock(config.dataDir, config.owner ?? 'service');
  try {
    const files = await openFileAdapters(config, clock, log);
    const urls = { base_url: '', mcp_url: '', console_url: '' };
    const serving = (config.owner ?? 'service') === 'service';
    // The tool-call policy: the person's (options.json) or the shipped default; the engine loads at its first question.
    const policyText = () => files.options.read().policy?.text ?? null;
    const policyEngine = createCedarEngine({
      activeText: policyText,
      // what it decided before, in this process or another: `staged list` without a service needs no engine for it
      memo: policyMemoFile(config.dataDir),
    });
    let events: EventHub | null = null;
    const policyCheck = storedPolicyCheck(policyEngine, policyText, () => events?.emit({ type: 'health' }));
    const core = await assembleCore({
      clock,
      log,
      options: files.options,
      siteStore: files.siteStore,
      staged: files.stagedFiles,
      audit: files.audit,
      vault: files.vault,
      policyEngine,
      compileJson: files.compileJson,
      auditSite: () => files.siteStore.read().site.url || 'local',
      consoleUrl: () => urls.console_url || null,
      ...(config.ai ? { ai: config.ai } : {}),
      ...(config.stagedLifetimeMs ? { stagedLifetimeMs: config.stagedLifetimeMs } : {}),
      ...(config.plugins ? { plugins: config.plugins } : {}),
      // One cloud client per data dir: it answers the feature gates from its verified certificate once connected (the free policy otherwise).
      cloud: (hub) =>
        CloudClient.open({
          dataDir: config.dataDir,
          vault: files.vault,
          clock,
          log,
          local: new LocalEntitlements('free'),
          siteUrl: () => urls.base_url || 'http://127.0.0.1/',
          productsInUse: (): CloudProduct[] => ['mcp', 'verto'],
          // a background refresh changed what the console shows: it reloads cloud.status / health.get
          onChange: () => hub.events.emit({ type: 'health' }),
          ...config.cloud,
        }),
      // Upstream MCP servers (docs/upstreams.md): the service connects them; a CLI command on the data dir only when asked.
      upstreams: async (hub) => {
        const manager = new UpstreamManager({
          store: files.upstreamStore,
          vault: files.vault,
          registry: hub.registry,
          log,
          autoConnect: serving,
          changed: () => hub.events.emit({ type: 'health' }),
          sandbox: { dataDir: config.dataDir, ...config.upstreams?.sandbox },
          prepare: files.loadJsonSchema,
          ...(config.upstreams?.backoff ? { backoff: config.upstreams.backoff } : {}),
          ...(config.upstreams?.previewReadMs ? { previewReadMs: config.upstreams.previewReadMs } : {}),
          ...(config.upstreams?.processTime ? { processTime: config.upstreams.processTime } : {}),
          // Upstreams without a Client ID Metadata Document URL of their own use the connected cloud gateway's (https only).
          oauth: {
            defaultClientMetadataUrl: () =>
              hub.cloud?.connected() ? cloudMetadataUrl(hub.cloud.status().gateway_url) : null,
            ...config.upstreams?.oauth,
          },
        });
        if (files.upstreamStore.read().upstreams.length || config.plugins?.length) await files.loadJsonSchema();
        return manager;
      },
      // MCP clients' config files (docs/clients.md): the same code as `gatehouse clients`, through the service's own actions.
      clients: (dispatch) =>
        createClientsService({
          dataDir: config.dataDir,
          dispatch,
          mcpUrl: () => urls.mcp_url,
          launch: bridgeLaunchFor(config.dataDir),
          vault: files.vault.label.startsWith('keychain') ? 'keychain' : 'file',
          ...(config.clientsPlace ? { place: config.clientsPlace } : {}),
        }),
      health: (parts) =>
        healthReporter({
          dataDir: config.dataDir,
          clock,
          settings: parts.settings,
          vault: files.vault,
          options: files.options,
          siteStore: files.siteStore,
          upstreamStore: files.upstreamStore,
          stagedFiles: files.stagedFiles,
          registry: parts.registry,
          staging: parts.staging,
          tokens: parts.tokens,
          urls,
          bridge: bridgeLaunchFor(config.dataDir),
          cloud: parts.cloudHealth,
          cloudWarnings: parts.cloudWarnings,
          storage: () => parts.storage.fault(),
          policyProblem: () => policyCheck.problem(),
        }),
    });
    events = core.events;
    const { calls, admin } = core;
    const cloud = core.cloud!;
    const upstreams = core.upstreams!;
    const site = calls.site;
    // A site file that was corrupt is never re-seeded over: the person's pages are in the backup.
    if (files.siteStore.corruptBackup) await site.markDataLost();
    else await site.seedIfEmpty();

    const jobs = startBackgroundJobs(log, [
      { every: 15_000, what: 'staged sweep', run: () => calls.staging.sweep() },
      { every: 5_000, what: 'stats flush', run: () => calls.stats.flush() },
      // a disk that refused writes is tried again, so calls resume (and the tray clears) without waiting for a call
      { every: 5_000, what: 'storage probe', run: () => calls.storage.ready() },
      { every: 3600_000, what: 'audit sweep', run: () => files.audit.sweep() },
    ]);
    await core.lifecycle.recover();
    // A CLI command working on the data dir makes no background cloud request: only the service refreshes and uploads.
    if (serving) cloud.start();

    let closed = false;
    return {
      clock,
      log,
      options: files.options,
      siteStore: files.siteStore,
      vault: files.vault,
      events: core.events,
      settings: core.settings,
      audit: files.audit,
      users: admin.users,
      tokens: admin.tokens,
      registry: calls.registry,
      stats: calls.stats,
      usage: calls.usage,
      auditor: calls.auditor,
      staging: calls.staging,
      pipeline: calls.pipeline,
      storage: calls.storage,
      site,
      builtin: calls.builtin,
      siteIdentity: admin.siteIdentity,
      entitlements: calls.entitlements,
      sessions: admin.sessions,
      invoke: admin.invoke,
      dispatch: admin.dispatch,
      health: core.health,
      cloud,
      upstreams,
      profiles: admin.profiles,
      approvalLinks: core.desk.approvalLinks,
      /** the grouped facades of the one assembly (assemble-core.ts) */
      assembled: core,
      /** Connects the upstreams (the service calls it once it is ready: they are never on the path to ready). */
      startUpstreams: () => upstreams.connectAll(),
      /** Deletes audit files past their retention: the service runs it once ready, then the hourly job does (a laptop that sleeps may never stay up an hour). */
      sweepAudit: () => files.audit.sweep(),
      /** Checks the stored policy once ready (never on the path to ready: it loads the engine); a problem is logged and in the health report. */
      checkPolicy: async () => {
        const problem = await policyCheck.check();
        if (problem) log.warn(`policy: ${problem}`);
        return problem;
      },
      /** set the service URLs once the HTTP server listens */
      setUrls(base: string) {
        urls.base_url = base;
        urls.mcp_url = `${base}${MCP_PATH}`;
        urls.console_url = `${base}${CONSOLE_PATH}`;
      },
      async close(): Promise<void> {
        if (closed) return;
        closed = true;
        jobs.stop();
        await core.lifecycle.stop();
        await calls.stats.flush().catch((e) =>
          log.error('stats flush at close failed: the last few seconds of counters are lost', {
            error: (e as Error).message,
          }),
        );
        await files.audit.close();
        await files.options.flush();
        await files.siteStore.flush();
        await files.upstreamStore.flush();
        // what the policy learned is written before the data dir is let go (a late write would land in it after)
        await policyEngine.settled();
        await lock.release();
      },
    };
  } catch (e) {
    await lock.release();
    // A file the start writes after the lock (the settings, the audit log) refused by the disk: the same one sentence.
    throw (await startRefused(config.dataDir, e)) ?? e;
  }
}

/** The data dir's files as the core's adapters: the JSON stores, the staged files, the vault and the audit log. */
async function openFileAdapters(config: LocalCoreConfig, clock: Clock, log: Logger) {
  const options = await JsonFileStore.open({
    file: join(config.dataDir, 'options.json'),
    schema: OptionsData,
    defaults: emptyOptions,
    log,
    salvage: salvageOptions,
  });
  const siteStore = await JsonFileStore.open({
    file: join(config.dataDir, 'site.json'),
    schema: SiteData,
    defaults: emptySiteData,
    log,
    salvage: (raw) => salvageSite(raw, clock.now()),
  });
  const stagedFiles = await StagedFiles.open({ dir: join(config.dataDir, 'staged'), log });
  const vault: LabelledVault = await openVault({
    dataDir: config.dataDir,
    backend: config.vault ?? 'auto',
    log,
    warnFileVault: config.warnFileVault ?? true,
  });
  // the audit log reads its bounds from the settings at each sweep (options.json, as SettingsService does)
  const settingsNow = () => options.read().settings;
  const audit = await AuditLog.open({
    dir: join(config.dataDir, 'audit'),
    clock,
    log,
    retentionDays: () => settingsNow().audit_retention_days,
    maxTotalBytes: () => settingsNow().audit_max_mb * 1024 * 1024,
  });
  const upstreamStore = await JsonFileStore.open({
    file: join(config.dataDir, 'upstreams.json'),
    schema: UpstreamsData,
    defaults: emptyUpstreams,
    log,
    // One bad upstream is set aside, not the file: the others run (upstreams-salvage.ts).
    salvage: salvageUpstreams,
    // Every pinned tool definition: validating megabytes again at every open would be on the path to ready.
    trustOwnWrites: true,
    fingerprintName: 'upstreams',
  });
  // JSON Schema validation (the MCP server SDK's Ajv) only for tools that declare a JSON Schema, the upstreams':
  // loaded before the first of them registers (at the upstreams' load, and at an add), never on the way to ready without them.
  let compiler: JsonSchemaCompiler | null = null;
  const loadJsonSchema = async () => {
    compiler ??= (await import('./mcp/json-schema.ts')).jsonSchemaCompiler;
  };
  const compileJson: JsonSchemaCompiler = (schema) => {
    if (!compiler) throw new Error('the JSON Schema validator is not loaded yet');
    return compiler(schema);
  };
  return { options, siteStore, stagedFiles, vault, audit, upstreamStore, loadJsonSchema, compileJson };
}
export type LocalCore = Awaited<ReturnType<typeof openLocalCore>>;
