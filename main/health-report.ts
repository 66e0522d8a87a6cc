import type { BridgeLaunchInfo, CloudHealth, HealthReport, Warning } from './contract/health.ts';
import type { Clock } from './lib/clock.ts';
import type { StorageFault } from './core/calls/storage-guard.ts';
import type { CloudStatusView } from './contract/cloud-actions.ts';
import type { Registry } from './core/calls/registry.ts';
import type { SettingsService } from './core/admin/settings-service.ts';
import type { Staging } from './core/staging/staging.ts';
import type { Tokens } from './core/identity/tokens.ts';
import type { LabelledVault } from './store/vault.ts';
import type { StagedFiles } from './store/staged-files.ts';
import { VERSION } from './version.ts';
import { awaitsSettlement } from './contract/staged-settlement.ts';
import { setAsideWarning } from './plugins/upstream/upstreams-salvage.ts';

/** The cloud part of the health report while no cloud gateway is connected. */
export const NOT_CONNECTED: CloudHealth = {
  success: false,
  gateway: {
    connected: false,
    last_sync: null,
    license: 'not_connected',
    entitlements: 'local',
    usage: 'local',
    cloud_token: 'none',
  },
  products: { aeo: 'inactive', code: 'inactive', verto: 'inactive', mcp: 'active', pro: 'inactive' },
};

/** A store as far as its warnings go. */
interface StoreFacts {
  file: string;
  corruptBackup: string | null;
  salvaged: { dropped: string[]; backup: string } | null;
}

export interface HealthDeps {
  dataDir: string;
  clock: Clock;
  settings: SettingsService;
  vault: LabelledVault;
  options: StoreFacts;
  siteStore: StoreFacts;
  /** upstreams.json: an upstream set aside is its own warning (upstreams-salvage.ts) */
  upstreamStore?: StoreFacts;
  stagedFiles: Pick<StagedFiles, 'problems'>;
  registry: Registry;
  staging: Pick<Staging, 'pendingCount' | 'list'>;
  tokens: Tokens;
  /** the service's URLs; empty until the HTTP server listens */
  urls: { base_url: string; mcp_url: string; console_url: string };
  bridge: BridgeLaunchInfo;
  cloud: () => CloudHealth;
  /** the cloud client's warnings (gateway unreachable, certificate stale, outbox full, quotas): each says what to do */
  cloudWarnings?: () => Warning[];
  /** a part that must write before a call runs (audit, usage outbox) and cannot: calls are refused until it can */
  storage?: () => StorageFault | null;
  /** what is wrong with the stored policy (stored-policy-check.ts): every call is refused until it is fixed */
  policyProblem?: () => string | null;
}

/** The disk refuses writes: what the console's overview and the tray say (storage_full for a full disk). */
export function storageWarning(f: StorageFault): Warning {
  const full = f.error === 'ENOSPC' || f.error === 'EDQUOT';
  const what = full
    ? 'The disk that holds the data dir is full'
    : `The disk that holds the data dir refuses writes (${f.error})`;
  return {
    code: full ? 'storage_full' : 'storage_failing',
    message: `${what} since ${f.since} (${f.part}): tool calls are refused (storage_unavailable) so that none goes unrecorded. Free space; nothing recorded so far is lost, and calls resume by themselves.`,
  };
}

/** The cloud client's warnings plus its quota alerts, as health warnings (the tray reads one place). */
export function cloudWarnings(s: CloudStatusView): Warning[] {
  const quota = s.quota_alerts.map((a) => ({
    code: a.level === 'exceeded' ? 'cloud_quota_exceeded' : 'cloud_quota_near',
    message: `${a.level === 'exceeded' ? 'Quota used up' : 'Quota nearly used up'}: ${a.metric} for the ${a.scope}${a.subject ? ` ${a.subject}` : ''}, ${a.used} of ${a.limit}${a.period ? ` this ${a.period}` : ''}; it resets at ${a.reset_at}. Upgrade the plan or wait for the reset.`,
  }));
  return [...s.warnings, ...quota];
}

/**
 * The cloud part as it is true of this service:
 * - `connected` says the site is connected (registered, its key accepted),
 *   not whether the last sync got through: a failed sync, or the circuit
 *   breaker open after several, is a warning (`cloud_sync_failed`,
 *   `cloud_gateway_unreachable`) and `success: false`, not a disconnection.
 * - `mcp` is active while the endpoint is switched on, whatever the plan:
 *   the MCP gateway's core (`mcp.core`, `mcp.staging`) is free, and a plan
 *   without the paid MCP product still serves it.
 */
export function truthfulCloud(cloud: CloudHealth, endpointOn: boolean): CloudHealth {
  const connected = cloud.gateway.cloud_token === 'valid';
  const mcp = endpointOn && cloud.products.mcp !== 'active' ? 'active' : cloud.products.mcp;
  if (connected === cloud.gateway.connected && mcp === cloud.products.mcp) return cloud;
  return { ...cloud, gateway: { ...cloud.gateway, connected }, products: { ...cloud.products, mcp } };
}

/** What the console's overview, the tray and `GET health` show: built fresh on every call. */
export function healthReporter(deps: HealthDeps): () => HealthReport {
  const warnings = (): Warning[] => [
    ...(deps.vault.backend === 'file'
      ? [
          {
            code: 'vault_file',
            message: 'Secrets are kept in a plain file (vault: file (not encrypted)): no OS keychain was reachable.',
          },
        ]
      : []),
    ...[deps.options.corruptBackup, deps.siteStore.corruptBackup, deps.upstreamStore?.corruptBackup]
      .filter(Boolean)
      .map((f) => ({
        code: 'store_corrupt',
        message: `A corrupt data file was moved aside to ${f}; Gatehouse started from defaults for it.`,
      })),
    ...[deps.options, deps.siteStore].flatMap((s) =>
      s.salvaged
        ? [
            {
              code: 'store_salvaged',
              message: `${s.file} had invalid parts; everything else was kept. Dropped: ${s.salvaged.dropped.join(', ')}. The original is in ${s.salvaged.backup}.`,
            },
          ]
        : [],
    ),
    ...[deps.upstreamStore ? setAsideWarning(deps.upstreamStore) : null].filter((w): w is Warning => w !== null),
    ...deps.stagedFiles.problems.map((message) => ({ code: 'store_corrupt', message })),
    ...deps.registry.listPlugins().flatMap((p) => {
      const s = p.status?.();
      // A person who signed out of a remote knows: no warning for it (its status says signed_out).
      if (s?.status === 'sign_in_required')
        return [{ code: 'upstream_sign_in_required', message: `${p.title} needs a sign-in: ${s.detail ?? ''}` }];
      return s?.status === 'down' ? [{ code: 'upstream_down', message: `${p.title} is down: ${s.detail ?? ''}` }] : [];
    }),
    ...reviewWarning(
      deps.registry.listPlugins().flatMap((p) => {
        const r = p.awaitingReview?.();
        return r && r.tools + r.prompts + (r.views ?? 0) + (r.instructions ?? 0) > 0 ? [{ id: p.id, ...r }] : [];
      }),
    ),
    ...unsettledWarning(deps.staging.list({ status: 'failed' }).filter(awaitsSettlement).length),
    ...(deps.cloudWarnings?.() ?? []),
    ...[deps.storage?.()].flatMap((f) => (f ? [storageWarning(f)] : [])),
    ...[deps.policyProblem?.()].flatMap((message) => (message ? [{ code: 'policy_unavailable', message }] : [])),
  ];
  return () => {
    const since = deps.clock.now() - 24 * 3600_000;
    const enabled = deps.settings.get().enabled;
    return {
      name: 'gatehouse',
      version: VERSION,
      enabled,
      ...deps.urls,
      data_dir: deps.dataDir,
      vault: { backend: deps.vault.backend, label: deps.vault.label },
      bridge: deps.bridge,
      pending_approvals: deps.staging.pendingCount(),
      recent_clients: deps.tokens
        .list()
        .filter((t) => t.last_used && Date.parse(t.last_used) >= since)
        .sort((a, b) => (b.last_used ?? '').localeCompare(a.last_used ?? ''))
        .map((t) => ({
          token_id: t.id,
          label: t.label,
          client: deps.tokens.lastClient(t.id),
          last_used: t.last_used!,
        })),
      cloud: truthfulCloud(deps.cloud(), enabled),
      warnings: warnings(),
    };
  };
}

/** Writes sent whose effect nobody knows wait for a person (docs/upstreams.md, "Settling it"): the Overview says so. */
function unsettledWarning(n: number): Warning[] {
  if (n === 0) return [];
  const one = n === 1;
  return [
    {
      code: 'outcome_unknown',
      message: `${n} ${one ? 'write was' : 'writes were'} sent, but whether ${one ? 'it' : 'they'} took effect is unknown: check the other side, then settle ${one ? 'it' : 'them'} in Approvals (or: gatehouse staged settle ID applied|not-applied).`,
    },
  ];
}

/** The health warning's code for definitions held for review; the tray and the CLI look for it. */
export const REVIEW_WARNING = 'definitions_review';

/**
 * Definitions held for review are offered to no client (a call answers
 * `unknown tool`), so the Overview, the tray and `gatehouse status` must not
 * look fine while any wait (docs/upstreams.md, "Names, pinning, classes").
 */
function reviewWarning(
  waiting: ReadonlyArray<{ id: string; tools: number; prompts: number; views?: number; instructions?: number }>,
): Warning[] {
  const n = waiting.reduce((sum, w) => sum + w.tools + w.prompts + (w.views ?? 0) + (w.instructions ?? 0), 0);
  if (n === 0) return [];
  const of = (k: number, what: string) => (k ? [`${k} ${what}${k === 1 ? '' : 's'}`] : []);
  const where = waiting
    .slice(0, 5)
    .map(
      (w) =>
        `${w.id}: ${[...of(w.tools, 'tool'), ...of(w.prompts, 'prompt'), ...of(w.views ?? 0, 'view'), ...(w.instructions ? ['its instructions'] : [])].join(', ')}`,
    )
    .join('; ');
  const more = waiting.length > 5 ? `; and ${waiting.length - 5} more servers` : '';
  const first = waiting[0]!.id;
  return [
    {
      code: REVIEW_WARNING,
      message: `${n} ${n === 1 ? 'definition waits' : 'definitions wait'} for review (${where}${more}): offered to no client until a person approves ${n === 1 ? 'it' : 'them'}, a client calling ${n === 1 ? 'it' : 'one'} gets "unknown tool". Review in the console's Upstreams, or: gatehouse upstreams review ${first}.`,
    },
  ];
}
