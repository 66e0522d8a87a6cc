import type { Settings } from './contract/settings.ts';
import type { HealthReport } from './contract/health.ts';
import type { CloudHealth } from './contract/health.ts';
import { PRINCIPALS } from './contract/principal.ts';
import { HTTP_REFUSAL, RESOURCE_READ } from './contract/audit.ts';
import type { Clock } from './lib/clock.ts';
import type { Logger } from './lib/logger.ts';
import type {
  AiProviderSource,
  AuditReader,
  AuditSink,
  AuditTrail,
  DocumentStore,
  EntitlementSource,
  UsageSink,
  Vault,
} from './core/ports/ports.ts';
import type { ClientActions } from './core/ports/clients-port.ts';
import { type OptionsData, dropLegacyStaged, legacyStaged } from './core/ports/options-data.ts';
import type { Plugin } from './core/calls/tool.ts';
import type { JsonSchemaCompiler } from './core/calls/tool-schema.ts';
import { Users } from './core/identity/users.ts';
import { Tokens } from './core/identity/tokens.ts';
import { Profiles } from './core/identity/profiles.ts';
import { ConsoleSessions } from './core/identity/console-sessions.ts';
import { Registry } from './core/calls/registry.ts';
import { EventHub } from './core/events.ts';
import { StatsRecorder } from './core/calls/stats.ts';
import { Auditor } from './core/calls/auditor.ts';
import { UsageRecorder } from './core/calls/usage.ts';
import { StorageGuard, type StoragePart } from './core/calls/storage-guard.ts';
import { Pipeline } from './core/calls/pipeline.ts';
import { Staging } from './core/staging/staging.ts';
import type { StagedStore } from './core/staging/staged-store.ts';
import type { StagingLimits } from './core/staging/staged-index.ts';
import { confirmPolicyOf } from './core/staging/staged-policy.ts';
import { deskEvent, standingOf } from './core/staging/staged-standing.ts';
import { ApprovalLinks } from './core/staging/approval-links.ts';
import { PolicyGate } from './core/policy/policy-gate.ts';
import type { PolicyEngine } from './core/policy/policy.ts';
import { PolicyListing } from './core/policy/policy-listing.ts';
import { LocalEntitlements } from './core/policy/local-entitlements.ts';
import { SettingsService } from './core/admin/settings-service.ts';
import { createInvoke, dispatchAs } from './core/admin/invoke.ts';
import { createSitePlugin } from './plugins/site/index.ts';
import type { SiteData } from './plugins/site/site-data.ts';
import { builtinPlugin } from './plugins/builtin/index.ts';
import { clientTokenVault } from './store/vault-account.ts';
import type { CloudClient } from './cloud-client/index.ts';
import { cloudActions } from './cloud-client/cloud-actions-port.ts';
import { cloudAiFor } from './cloud-client/cloud-ai.ts';
import type { UpstreamManager } from './plugins/upstream/upstream-manager.ts';
import { NOT_CONNECTED, cloudWarnings, truthfulCloud } from './health-report.ts';
import type { ApiEvent } from './contract/api.ts';
import type { EndpointCore } from './mcp/endpoint.ts';
import type { Warning } from './contract/health.ts';
import { VERSION } from './version.ts';

/** The audit log as the core uses it: appended to, read back, asked at recovery; the file log adds a storage part and a live feed. */
export type CoreAudit = AuditSink &
  AuditReader &
  AuditTrail & {
    readonly storage?: StoragePart;
    onAppend?(listener: (entry: Parameters<AuditSink['append']>[0]) => void): void;
  };

/** What the core is built on: the production service hands it the file adapters (local-core.ts), tests the memory ones (test/helpers/core.ts). */
export interface CoreAdapters {
  clock: Clock;
  log?: Logger;
  options: DocumentStore<OptionsData>;
  siteStore: DocumentStore<SiteData>;
  staged: StagedStore;
  audit: CoreAudit;
  vault: Vault;
  /** the tool-call policy's engine (main/policy/cedar-engine.ts): tests run the same one over their memory options */
  policyEngine: PolicyEngine;
  /** JSON Schema validation for tools that declare one (the upstreams'); main/mcp/json-schema.ts */
  compileJson: JsonSchemaCompiler;
  /** the site a call is audited under */
  auditSite: () => string;
  /** the console's address, or null while no HTTP server listens */
  consoleUrl: () => string | null;
  /** AI features' provider; default: the cloud gateway's when a cloud client is given, none otherwise */
  ai?: AiProviderSource;
  stagedLifetimeMs?: number;
  /** staging's bounds (staged-index.ts defaults otherwise; tests make them small) */
  stagingLimits?: Partial<StagingLimits>;
  /** the time limit of a call whose tool names none (pipeline.ts default otherwise) */
  callTimeoutMs?: number;
  /** the built-in manual and the local site registered (default true); false: only `plugins` (unit tests of the call path) */
  gatewayPlugins?: boolean;
  /** more tool plugins, registered after the gateway's own */
  plugins?: Plugin[];
  /** usage events also go here (tests watch them); the cloud outbox gets them when a cloud client is given */
  usageSink?: UsageSink;
  /** the vendor gateway's client (main/cloud-client/), given the hub and counters it reports through */
  cloud?: (hub: { events: EventHub; stats: StatsRecorder }) => Promise<CloudClient>;
  /** the upstream MCP servers (main/plugins/upstream/), given the registry their tools go into */
  upstreams?: (hub: { events: EventHub; registry: Registry; cloud: CloudClient | null }) => Promise<UpstreamManager>;
  /** the MCP clients' config files (main/clients/), through the service's own actions */
  clients?: (dispatch: () => ReturnType<typeof dispatchAs>) => ClientActions;
  /** the health report, given the assembled parts; default: a memory report with no warnings */
  health?: (parts: HealthParts) => () => HealthReport;
}

/** What a health report reads of the assembled core. */
export interface HealthParts {
  settings: SettingsService;
  registry: Registry;
  staging: Staging;
  tokens: Tokens;
  storage: StorageGuard;
  consoleUrl: () => string | null;
  cloudHealth: () => CloudHealth;
  /** the cloud client's and the upstreams' warnings: each says what to do */
  cloudWarnings: () => Warning[];
}

/**
 * The one assembly of the core: every object the gateway runs, wired the
 * same way whatever the adapters (docs/architecture.md, "Composition").
 * The service builds it over files (local-core.ts), tests over memory
 * (test/helpers/core.ts), so a test's tools/call runs the policy gate, the
 * storage guard and the confirm policy production runs. It answers in
 * facades by who uses them: `calls` (the call path), `desk` (the person's
 * side: pending writes, live events, approval links), `admin` (the actions),
 * `endpoint` (what the MCP endpoint needs of the core) and `lifecycle`.
 */
export async function assembleCore(a: CoreAdapters) {
  const { clock, options, siteStore, audit } = a;
  const events = new EventHub();
  const settings = new SettingsService(options, events);
  audit.onAppend?.((entry) => events.emit({ type: 'audit', entry }));
  const users = new Users(options, clock);
  const admin = await users.ensureAdmin();
  const tokens = new Tokens(options, clock);
  const registry = new Registry(a.compileJson);
  const profiles = new Profiles(options, clock, registry);
  registry.useProfiles((name) => profiles.get(name));
  const stats = new StatsRecorder(
    options,
    clock,
    (name) => registry.has(name) || name === RESOURCE_READ || name === HTTP_REFUSAL,
  );
  const cloud = a.cloud ? await a.cloud({ events, stats }) : null;
  const cloudPort = cloud
    ? cloudActions({
        client: cloud,
        clock,
        stats: () => stats.snapshot(),
        changed: () => events.emit({ type: 'health' }),
      })
    : null;
  // Every event is counted locally (the Usage screen) and queued in the cloud outbox, which keeps it only while a site is connected.
  const usage = new UsageRecorder(
    {
      record: (e) => {
        stats.record(e);
        cloud?.usage.record(e);
        a.usageSink?.record(e);
      },
    },
    clock,
    (e, ev) => a.log?.error('usage event not recorded', { event: ev.event, error: (e as Error).message }),
  );
  const ai =
    a.ai ??
    (cloud && cloudPort
      ? cloudAiFor(
          () => cloud.api,
          { product: 'verto', feature: 'verto.translate' },
          (e) => cloudPort.noticeRefusal(e),
        )
      : null);
  const auditor = new Auditor(audit, stats, clock, a.auditSite);
  const policy = new PolicyGate({
    engine: a.policyEngine,
    settings: () => settings.get(),
    profileOf: (name) => profiles.get(name),
    clock,
  });
  const standing = standingOf({ token: (id) => tokens.byId(id), registry, settings: () => settings.get() });
  const staging = new Staging({
    store: a.staged,
    users: (id) => users.byId(id),
    registry,
    auditor,
    events,
    clock,
    auditTrail: audit,
    settings: () => settings.get(),
    usage,
    standing,
    confirmPolicy: confirmPolicyOf({
      gate: policy,
      registry,
      token: (id) => tokens.byId(id),
      users: (id) => users.byId(id),
    }),
    ...(a.log ? { log: a.log } : {}),
    ...(a.stagedLifetimeMs ? { lifetimeMs: a.stagedLifetimeMs } : {}),
    ...(a.stagingLimits ? { limits: a.stagingLimits } : {}),
  });
  const entitlements: EntitlementSource = cloud?.entitlements ?? new LocalEntitlements('free');
  // A call runs only when its audit line and usage event can be written (decisions.md "Storage failures").
  const storage = new StorageGuard(
    [audit.storage, cloud?.usage.storage].filter((p): p is StoragePart => p !== undefined),
    () => events.emit({ type: 'health' }),
  );
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
    ...(a.callTimeoutMs ? { timeoutMs: a.callTimeoutMs } : {}),
  });
  // tools/list shows what the policy in force lets the caller call (policy-listing.ts)
  const listing = new PolicyListing({ gate: policy, customPolicy: () => options.read().policy?.text ?? null });

  const site = createSitePlugin({
    store: siteStore,
    clock,
    ai: ai ?? NO_AI,
    usage,
    adminUserId: admin.id,
  });
  const siteIdentity = (): Record<string, unknown> => site.identity();
  const watchSettings = (listener: (s: Settings) => void) =>
    events.subscribe((e) => e.type === 'settings' && listener(e.settings));
  const builtin = builtinPlugin({ registry, staging, settings: () => settings.get(), watchSettings, siteIdentity });
  if (a.gatewayPlugins !== false) {
    registry.add(builtin);
    registry.add(site);
  }
  for (const p of a.plugins ?? []) registry.add(p);
  const upstreams = a.upstreams ? await a.upstreams({ events, registry, cloud }) : null;
  for (const p of (await upstreams?.load()) ?? []) registry.add(p);
  // A revoked token's own upstream processes (one process per client) end with it.
  if (upstreams) tokens.onRevoke((id) => void upstreams.tokenRevoked(id));
  await registry.start((id, e) => a.log?.error(`plugin '${id}' failed to start`, { error: (e as Error).message }));

  const cloudHealth = () => cloudPort?.health() ?? NOT_CONNECTED;
  const health = (a.health ?? memoryHealth)({
    settings,
    registry,
    staging,
    tokens,
    storage,
    consoleUrl: a.consoleUrl,
    cloudHealth,
    cloudWarnings: () => [...(cloudPort ? cloudWarnings(cloudPort.status()) : []), ...(upstreams?.warnings() ?? [])],
  });
  const sessions = new ConsoleSessions(clock);
  /** a new policy may change every tools/list: the endpoint's list_changed hears it */
  const policyWatchers = new Set<() => void>();
  // keyed by the service once its admin key is loaded (service.ts): a CLI on the data dir makes no links
  const approvalLinks = new ApprovalLinks(staging, a.consoleUrl);
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
    ...(a.log ? { log: a.log } : {}),
    clientVault: clientTokenVault(a.vault),
    consoleUrl: a.consoleUrl,
    // pro/cloud/status says what the health report says
    cloud: () => truthfulCloud(cloudHealth(), settings.get().enabled),
    entitlements: () => entitlements,
    ...(cloudPort ? { cloudActions: cloudPort } : {}),
    ...(upstreams ? { upstreams } : {}),
    ...(a.clients ? { clients: a.clients(() => dispatch) } : {}),
    policy: {
      engine: a.policyEngine,
      gate: policy,
      stored: () => options.read().policy,
      save: async (stored) => {
        await options.update((d) => void (d.policy = stored));
        for (const l of policyWatchers) l();
      },
    },
  });
  /** invoke as the console in the app's window would call it: for in-process callers (the service API, tests) */
  const dispatch = dispatchAs(invoke, PRINCIPALS.appConsole);

  const endpoint: EndpointCore = {
    registry,
    pipeline,
    listing,
    settings: () => settings.get(),
    instructions: (ctx) => builtin.instructions(ctx),
    // settings, a revoked token (its streams end now), a changed role and a new policy all change what a token may see
    watchSettings: (listener) => {
      const offs = [
        events.subscribe((e) => e.type === 'settings' && listener()),
        tokens.onRevoke(listener),
        users.onRoleChange(listener),
        (policyWatchers.add(listener), () => void policyWatchers.delete(listener)),
      ];
      return () => offs.forEach((off) => off());
    },
    tokens,
    auditor,
    clock,
    // gatehouse-bridge --remote URL finds the upstream configured for URL (main/mcp/upstream-lookup.ts)
    remotes: () => upstreams?.list().flatMap((u) => (u.url ? [{ id: u.id, url: u.url }] : [])) ?? [],
    profileOf: (name) => profiles.get(name),
    ...(upstreams
      ? {
          resourceUpdates: (listener: (uri: string) => void) => upstreams.onResourceUpdated(listener),
          upstreamLogs: (listener: Parameters<typeof upstreams.onLog>[0]) => upstreams.onLog(listener),
        }
      : {}),
    tasks: { staging, approvalUrl: (id) => approvalLinks.urlFor(id) },
  };

  return {
    clock,
    events,
    settings,
    cloud,
    upstreams,
    health,
    /** the call path: what a tools/call, resources/read or prompts/get goes through */
    calls: {
      registry,
      pipeline,
      policy,
      listing,
      staging,
      auditor,
      usage,
      storage,
      stats,
      entitlements,
      builtin,
      site,
    },
    /** the person's side: pending writes, the live feed as the tray and window get it, approval links */
    desk: {
      staging,
      approvalLinks,
      /** staged writes masked, with their `blocked` reason */
      subscribe: (listener: (e: ApiEvent) => void) =>
        events.subscribe((e) => listener(deskEvent(e, (x) => staging.blockOf(x)))),
    },
    /** the actions people take (console, CLI, IPC, tray) and who they are */
    admin: { invoke, dispatch, users, tokens, profiles, sessions, admin, siteIdentity },
    /** what the MCP endpoint needs of the core; the HTTP face adds the limiter, the Host rule and the body budget */
    endpoint,
    lifecycle: {
      /**
       * What a start does once everything is wired: staged writes of an earlier version move out of options.json;
       * then whatever a crash left in flight is completed or rolled back, and a revocation's discards a crash cut short finish.
       */
      async recover(): Promise<void> {
        const legacy = legacyStaged(options.read());
        if (legacy.length > 0) {
          await staging.adopt(legacy);
          await options.update(dropLegacyStaged);
          a.log?.info('staging: moved staged writes from options.json to staged/', { count: legacy.length });
        }
        await staging.recover();
        await staging.discardRevoked({ kind: 'service', job: 'token_check' });
      },
      /** stops the plugins (the upstreams first) and the cloud client; the adapters' files are the caller's to close */
      async stop(): Promise<void> {
        await upstreams?.stopAll();
        await registry.stop((id, e) => a.log?.error(`plugin '${id}' failed to stop`, { error: (e as Error).message }));
        await upstreams?.oauth.close();
        await cloud
          ?.close()
          .catch((e: unknown) => a.log?.error('cloud client close failed', { error: (e as Error).message }));
      },
    },
  };
}
export type AssembledCore = Awaited<ReturnType<typeof assembleCore>>;

/** No AI provider at all (unit fixtures without a cloud client), and we say so. */
export const NO_AI: AiProviderSource = {
  current: () => null,
  howToConfigure:
    'AI features route through the Gatehouse cloud gateway: connect it (gatehouse cloud connect --url GATEWAY_URL) and activate a license. Nothing was translated.',
};

/** The health report of a core with no files (memory adapters): what it can know, no warnings. */
function memoryHealth(p: HealthParts): () => HealthReport {
  return () => ({
    name: 'gatehouse',
    version: VERSION,
    enabled: p.settings.get().enabled,
    base_url: '',
    mcp_url: '',
    console_url: p.consoleUrl() ?? '',
    data_dir: '(memory)',
    vault: { backend: 'file', label: 'memory' },
    bridge: { command: 'gatehouse-bridge', args: [], platform: process.platform },
    pending_approvals: p.staging.pendingCount(),
    recent_clients: [],
    cloud: p.cloudHealth(),
    warnings: [],
  });
}
