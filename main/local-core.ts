import { join } from 'node:path';
import type { Settings } from './contract/settings.ts';
import { CONSOLE_PATH, MCP_PATH } from './contract/health.ts';
import type { AiProviderSource } from './core/ports/ports.ts';
import type { Clock } from './lib/clock.ts';
import type { Logger } from './lib/logger.ts';
import type { Plugin } from './core/calls/tool.ts';
import { systemClock } from './lib/clock.ts';
import {
  OptionsData,
  dropLegacyStaged,
  emptyOptions,
  legacyStaged,
  salvageOptions,
} from './core/ports/options-data.ts';
import { Users } from './core/identity/users.ts';
import { Tokens } from './core/identity/tokens.ts';
import { Profiles } from './core/identity/profiles.ts';
import { Registry } from './core/calls/registry.ts';
import { EventHub } from './core/events.ts';
import { StatsRecorder } from './core/calls/stats.ts';
import { Auditor } from './core/calls/auditor.ts';
import { Staging } from './core/staging/staging.ts';
import { confirmPolicyOf } from './core/staging/staged-policy.ts';
import { standingOf } from './core/staging/staged-standing.ts';
import { Pipeline } from './core/calls/pipeline.ts';
import { PolicyGate } from './core/policy/policy-gate.ts';
import { createCedarEngine } from './policy/cedar-engine.ts';
import { policyMemoFile } from './store/policy-memo-file.ts';
import { storedPolicyCheck } from './policy/stored-policy-check.ts';
import { SettingsService } from './core/admin/settings-service.ts';
import { LocalEntitlements } from './core/policy/local-entitlements.ts';
import { createInvoke, dispatchAs } from './core/admin/invoke.ts';
import { ConsoleSessions } from './core/identity/console-sessions.ts';
import { ApprovalLinks } from './core/staging/approval-links.ts';
import { PRINCIPALS } from './contract/principal.ts';
import { clientTokenVault } from './store/vault-account.ts';
import { createClientsService } from './clients/clients-service.ts';
import type { PlaceOf } from './contract/client-locations.ts';
import { JsonFileStore } from './store/json-file-store.ts';
import { openVault, type LabelledVault, type VaultChoice } from './store/vault.ts';
import { acquireLock, startRefused, type LockHandle } from './store/process-lock.ts';
import { AuditLog } from './store/audit/log.ts';
import { createLogger } from './lib/logger.ts';
import { createSitePlugin } from './plugins/site/index.ts';
import { SiteData, emptySiteData } from './plugins/site/site-data.ts';
import { salvageSite } from './plugins/site/site-salvage.ts';
import { StagedFiles } from './store/staged-files.ts';
import { builtinPlugin } from './plugins/builtin/index.ts';
import { UsageRecorder } from './core/calls/usage.ts';
import { StorageGuard } from './core/calls/storage-guard.ts';
import { HTTP_REFUSAL, RESOURCE_READ } from './contract/audit.ts';
import type { JsonSchemaCompiler } from './core/calls/tool-schema.ts';
import { bridgeLaunchFor } from './bridge-launch.ts';
import { cloudWarnings, healthReporter, truthfulCloud } from './health-report.ts';
import { startBackgroundJobs } from './background-jobs.ts';
import { CloudClient, type CloudClientOptions } from './cloud-client/index.ts';
import { cloudActions } from './cloud-client/cloud-actions-port.ts';
import { cloudAiFor } from './cloud-client/cloud-ai.ts';
import type { CloudProduct } from './contract/cloud/catalog.ts';
import { UpstreamManager, type UpstreamManagerDeps } from './plugins/upstream/upstream-manager.ts';
import { cloudMetadataUrl } from './plugins/upstream/oauth/oauth-upstreams.ts';
import { UpstreamsData, emptyUpstreams } from './plugins/upstream/upstream-data.ts';
import { salvageUpstreams } from './plugins/upstream/upstreams-salvage.ts';

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

/** No AI provider at all (unit fixtures without a cloud client), and we say so. */
export const NO_AI: AiProviderSource = {
  current: () => null,
  howToConfigure:
    'AI features route through the Gatehouse cloud gateway: connect it (gatehouse cloud connect --url GATEWAY_URL) and activate a license. Nothing was translated.',
};

/**
 * The composition root without HTTP: opens the stores, the vault and the
 * audit log, builds the core and the plugins, and wires them. Used by the
 * headless service (main/service.ts adds HTTP), the Electron shell and the
 * CLI when no service runs. "Local" as opposed to the cloud gateway.
 */
export async function openLocalCore(config: LocalCoreConfig) {
  const clock = config.clock ?? systemClock;
  const log = config.log ?? createLogger();
  const lock: LockHandle = await acquireLock(config.dataDir, config.owner ?? 'service');
  try {
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
    const events = new EventHub();
    const settings = new SettingsService(options, events);
    const audit = await AuditLog.open({
      dir: join(config.dataDir, 'audit'),
      clock,
      log,
      retentionDays: () => settings.get().audit_retention_days,
      maxTotalBytes: () => settings.get().audit_max_mb * 1024 * 1024,
    });
    audit.onAppend((entry) => events.emit({ type: 'audit', entry }));

    const users = new Users(options, clock);
    const admin = await users.ensureAdmin();
    const tokens = new Tokens(options, clock);
    // JSON Schema validation (the MCP server SDK's Ajv) only for tools that declare a JSON Schema, the upstreams':
    // loaded before the first of them registers (below, and at an add), never on the way to ready without them.
    let compileJson: JsonSchemaCompiler | null = null;
    const loadJsonSchema = async () => {
      compileJson ??= (await import('./mcp/json-schema.ts')).jsonSchemaCompiler;
    };
    const registry = new Registry((schema) => {
      if (!compileJson) throw new Error('the JSON Schema validator is not loaded yet');
      return compileJson(schema);
    });
    const profiles = new Profiles(options, clock, registry);
    registry.useProfiles((name) => profiles.get(name));
    const stats = new StatsRecorder(
      options,
      clock,
      (name) => registry.has(name) || name === RESOURCE_READ || name === HTTP_REFUSAL,
    );
    const urls = { base_url: '', mcp_url: '', console_url: '' };
    const localPolicy = new LocalEntitlements('free');
    // One cloud client per data dir: it answers the feature gates from its verified certificate once connected (the free policy otherwise).
    const cloud = await CloudClient.open({
      dataDir: config.dataDir,
      vault,
      clock,
      log,
      local: localPolicy,
      siteUrl: () => urls.base_url || 'http://127.0.0.1/',
      productsInUse: (): CloudProduct[] => ['mcp', 'verto'],
      // a background refresh changed what the console shows: it reloads cloud.status / health.get
      onChange: () => events.emit({ type: 'health' }),
      ...config.cloud,
    });
    const cloudPort = cloudActions({
      client: cloud,
      clock,
      stats: () => stats.snapshot(),
      changed: () => events.emit({ type: 'health' }),
    });
    // Every event is counted locally (the Usage screen) and queued in the cloud outbox, which keeps it only while a site is connected.
    const usageSink = {
      record: (e: Parameters<StatsRecorder['record']>[0]) => (stats.record(e), cloud.usage.record(e)),
    };
    const usage = new UsageRecorder(usageSink, clock, (e, ev) =>
      log.error('usage event not recorded', { event: ev.event, error: (e as Error).message }),
    );
    const ai =
      config.ai ??
      cloudAiFor(
        () => cloud.api,
        { product: 'verto', feature: 'verto.translate' },
        (e) => cloudPort.noticeRefusal(e),
      );
    const site = createSitePlugin({ store: siteStore, clock, ai, usage, adminUserId: admin.id });
    // A site file that was corrupt is never re-seeded over: the person's pages are in the backup.
    if (siteStore.corruptBackup) await site.markDataLost();
    else await site.seedIfEmpty();
    const siteIdentity = () => site.identity() as unknown as Record<string, unknown>;
    const auditor = new Auditor(audit, stats, clock, () => siteStore.read().site.url || 'local');
    // The tool-call policy: the person's (options.json) or the shipped default; the engine loads at its first question.
    const policyEngine = createCedarEngine({
      activeText: () => options.read().policy?.text ?? null,
      // what it decided before, in this process or another: `staged list` without a service needs no engine for it
      memo: policyMemoFile(config.dataDir),
    });
    const policyCheck = storedPolicyCheck(
      policyEngine,
      () => options.read().policy?.text ?? null,
      () => events.emit({ type: 'health' }),
    );
    const policy = new PolicyGate({
      engine: policyEngine,
      settings: () => settings.get(),
      profileOf: (name) => profiles.get(name),
      clock,
    });
    const standing = standingOf({ token: (id) => tokens.byId(id), registry, settings: () => settings.get() });
    const confirmPolicy = confirmPolicyOf({
      gate: policy,
      registry,
      token: (id) => tokens.byId(id),
      users: (id) => users.byId(id),
    });
    const staging = new Staging({
      store: stagedFiles,
      users: (id) => users.byId(id),
      registry,
      auditor,
      events,
      clock,
      auditTrail: audit,
      settings: () => settings.get(),
      log,
      usage,
      standing,
      confirmPolicy,
      ...(config.stagedLifetimeMs ? { lifetimeMs: config.stagedLifetimeMs } : {}),
    });
    const entitlements = cloud.entitlements;
    // A call runs only when its audit line and usage event can be written (decisions.md "Storage failures").
    const storage = new StorageGuard([audit.storage, cloud.usage.storage], () => events.emit({ type: 'health' }));
    const pipeline = new Pipeline({
      registry,
      staging,
      auditor,
      entitlements: () => entitlements,
      settings: () => settings.get(),
      clock,
      usage,
      storage,
      policy,
    });
    const watchSettings = (listener: (s: Settings) => void) =>
      events.subscribe((e) => e.type === 'settings' && listener(e.settings));
    const builtin = builtinPlugin({ registry, staging, settings: () => settings.get(), watchSettings, siteIdentity });
    registry.add(builtin);
    registry.add(site);
    for (const p of config.plugins ?? []) registry.add(p);
    // Upstream MCP servers (docs/upstreams.md): the service connects them; a CLI command on the data dir only when asked.
    const upstreamStore = await JsonFileStore.open({
      file: join(config.dataDir, 'upstreams.json'),
      schema: UpstreamsData,
      defaults: emptyUpstreams,
      log,
      // One bad upstream is set aside, not the file: the others run (upstreams-salvage.ts).
      salvage: salvageUpstreams,
    });
    const upstreams = new UpstreamManager({
      store: upstreamStore,
      vault,
      registry,
      log,
      autoConnect: (config.owner ?? 'service') === 'service',
      changed: () => events.emit({ type: 'health' }),
      sandbox: { dataDir: config.dataDir, ...config.upstreams?.sandbox },
      prepare: loadJsonSchema,
      ...(config.upstreams?.backoff ? { backoff: config.upstreams.backoff } : {}),
      ...(config.upstreams?.previewReadMs ? { previewReadMs: config.upstreams.previewReadMs } : {}),
      ...(config.upstreams?.processTime ? { processTime: config.upstreams.processTime } : {}),
      // Upstreams without a Client ID Metadata Document URL of their own use the connected cloud gateway's (https only).
      oauth: {
        defaultClientMetadataUrl: () => (cloud.connected() ? cloudMetadataUrl(cloud.status().gateway_url) : null),
        ...config.upstreams?.oauth,
      },
    });
    if (upstreamStore.read().upstreams.length || config.plugins?.length) await loadJsonSchema();
    for (const p of await upstreams.load()) registry.add(p);
    // A revoked token's own upstream processes (one process per client) end with it.
    tokens.onRevoke((id) => void upstreams.tokenRevoked(id));
    await registry.start((id, e) => log.error(`plugin '${id}' failed to start`, { error: (e as Error).message }));

    const health = healthReporter({
      dataDir: config.dataDir,
      clock,
      settings,
      vault,
      options,
      siteStore,
      upstreamStore,
      stagedFiles,
      registry,
      staging,
      tokens,
      urls,
      bridge: bridgeLaunchFor(config.dataDir),
      cloud: () => cloudPort.health(),
      cloudWarnings: () => [...cloudWarnings(cloudPort.status()), ...upstreams.warnings()],
      storage: () => storage.fault(),
      policyProblem: () => policyCheck.problem(),
    });
    const sessions = new ConsoleSessions(clock);
    // keyed by the service once its admin key is loaded (service.ts): a CLI on the data dir makes no links
    const approvalLinks = new ApprovalLinks(staging, () => urls.console_url || null);
    const invoke = createInvoke({
      approvalLinks,
      auditor,
      users,
      tokens,
      profiles,
      staging,
      registry,
      settings,
      stats,
      audit,
      events,
      sessions,
      clock,
      health,
      log,
      clientVault: clientTokenVault(vault),
      consoleUrl: () => urls.console_url || null,
      // pro/cloud/status says what the health report says
      cloud: () => truthfulCloud(cloudPort.health(), settings.get().enabled),
      entitlements: () => entitlements,
      cloudActions: cloudPort,
      upstreams,
      // MCP clients' config files (docs/clients.md): the same code as `gatehouse clients`, through the service's own actions.
      clients: createClientsService({
        dataDir: config.dataDir,
        dispatch: () => dispatch,
        mcpUrl: () => urls.mcp_url,
        launch: bridgeLaunchFor(config.dataDir),
        vault: vault.label.startsWith('keychain') ? 'keychain' : 'file',
        ...(config.clientsPlace ? { place: config.clientsPlace } : {}),
      }),
      policy: {
        engine: policyEngine,
        gate: policy,
        stored: () => options.read().policy,
        save: (stored) => options.update((d) => void (d.policy = stored)),
      },
    });
    /** invoke as the console in the app's window would call it: for in-process callers (the service API, tests) */
    const dispatch = dispatchAs(invoke, PRINCIPALS.appConsole);

    const jobs = startBackgroundJobs(log, [
      { every: 15_000, what: 'staged sweep', run: () => staging.sweep() },
      { every: 5_000, what: 'stats flush', run: () => stats.flush() },
      // a disk that refused writes is tried again, so calls resume (and the tray clears) without waiting for a call
      { every: 5_000, what: 'storage probe', run: () => storage.ready() },
      { every: 3600_000, what: 'audit sweep', run: () => audit.sweep() },
    ]);
    // Staged writes of an earlier version move out of options.json; then whatever a crash left in flight is completed or rolled back.
    const legacy = legacyStaged(options.read());
    if (legacy.length > 0) {
      await staging.adopt(legacy);
      await options.update(dropLegacyStaged);
      log.info('staging: moved staged writes from options.json to staged/', { count: legacy.length });
    }
    await staging.recover();
    // A revocation whose discards a crash cut short: finished now, as the service's own decision.
    await staging.discardRevoked({ kind: 'service', job: 'token_check' });
    // A CLI command working on the data dir makes no background cloud request: only the service refreshes and uploads.
    if ((config.owner ?? 'service') === 'service') cloud.start();

    let closed = false;
    return {
      clock,
      log,
      options,
      siteStore,
      vault,
      events,
      settings,
      audit,
      users,
      tokens,
      registry,
      stats,
      usage,
      auditor,
      staging,
      pipeline,
      storage,
      site,
      builtin,
      siteIdentity,
      entitlements,
      sessions,
      invoke,
      dispatch,
      health,
      cloud,
      upstreams,
      profiles,
      approvalLinks,
      /** Connects the upstreams (the service calls it once it is ready: they are never on the path to ready). */
      startUpstreams: () => upstreams.connectAll(),
      /** Deletes audit files past their retention: the service runs it once ready, then the hourly job does (a laptop that sleeps may never stay up an hour). */
      sweepAudit: () => audit.sweep(),
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
        await upstreams.stopAll();
        await registry.stop((id, e) => log.error(`plugin '${id}' failed to stop`, { error: (e as Error).message }));
        await upstreams.oauth.close();
        await cloud.close().catch((e) => log.error('cloud client close failed', { error: (e as Error).message }));
        await stats.flush().catch((e) =>
          log.error('stats flush at close failed: the last few seconds of counters are lost', {
            error: (e as Error).message,
          }),
        );
        await audit.close();
        await options.flush();
        await siteStore.flush();
        await upstreamStore.flush();
        await lock.release();
      },
    };
  } catch (e) {
    await lock.release();
    // A file the start writes after the lock (the settings, the audit log) refused by the disk: the same one sentence.
    throw (await startRefused(config.dataDir, e)) ?? e;
  }
}
export type LocalCore = Awaited<ReturnType<typeof openLocalCore>>;
