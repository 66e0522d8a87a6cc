import { z } from 'zod';
import {
  AuditQuery,
  type AuditEntry,
  type AuditPage,
  type AuditQueryInput,
  type AuditResult,
} from '../../main/contract/audit.ts';
import type { Principal } from '../../main/contract/principal.ts';
import { SETTINGS_DEFAULTS, type Settings } from '../../main/contract/settings.ts';
import type { TokenRecord, TokenScope } from '../../main/contract/tokens.ts';
import type { UsageEvent } from '../../main/contract/usage.ts';
import { ROLE_CAPABILITIES, type Role, type User } from '../../main/contract/users.ts';
import type { AuditReader, AuditSink, AuditTrail, Vault } from '../../main/core/ports/ports.ts';
import {
  defineTool,
  type AppliedState,
  type CallContext,
  type Plugin,
  type PluginHost,
  type StagedRef,
  type Tool,
  type ToolOutput,
} from '../../main/core/calls/tool.ts';
import type { UsageReporter } from '../../main/core/calls/usage.ts';
import type { StorageFault, StoragePart } from '../../main/core/calls/storage-guard.ts';
import { jsonSchemaCompiler } from '../../main/mcp/json-schema.ts';
import { MemoryStagedStore } from '../../main/core/staging/staged-store.ts';
import type { StagingLimits } from '../../main/core/staging/staged-index.ts';
import { capabilitiesOf } from '../../main/core/identity/users.ts';
import { MemoryStore } from './memory-store.ts';
import { OptionsData, emptyOptions } from '../../main/core/ports/options-data.ts';
import type { EventHub } from '../../main/core/events.ts';
import type { SettingsService } from '../../main/core/admin/settings-service.ts';
import type { Registry } from '../../main/core/calls/registry.ts';
import type { Staging } from '../../main/core/staging/staging.ts';
import { emptySiteData, SiteData } from '../../main/plugins/site/index.ts';
import { entryToCsvRow, entryToJsonLine, CSV_HEADER } from '../../main/store/audit/export-format.ts';
import { NO_AI, assembleCore } from '../../main/assemble-core.ts';
import { createCedarEngine } from '../../main/policy/cedar-engine.ts';
import { TestClock } from './service.ts';

/*
 * The core on in-memory adapters, for tests without files or sockets, built
 * by the one assembly production runs (main/assemble-core.ts): the policy
 * gate, the storage guard and the confirm policy are always there.
 * Three worlds, from the whole to one part:
 * - openCore(): everything the gateway wires (users, tokens, the built-in and
 *   site plugins, staging, the pipeline, invoke), for the action path.
 * - pipelineCore(): the call path with one user per role and only the test's
 *   own plugins, usage events and a store that can refuse writes.
 * - coreWorld(): staging with a small notes plugin alone, and restarts.
 */

export { MemoryStore };
/** A fixed start time for tests that compare times. */
export const T0 = Date.parse('2026-05-04T10:00:00.000Z');
/** Staging and pipeline tests that do not look at usage events. */
export const NO_USAGE: UsageReporter = { record: () => {} };

/**
 * Audit entries in memory: appended in order, queried newest first with an
 * offset cursor. `sync()` marks what is durable; `crash()` drops the rest,
 * as a kill would; `failNextSync` makes the next sync fail once.
 */
export class MemoryAudit implements AuditSink, AuditReader, AuditTrail {
  entries: AuditEntry[] = [];
  private synced = 0;
  failNextSync: Error | null = null;
  /** set: the audit log refuses writes (a full disk), as the storage guard sees it; null: it takes them */
  refusing: StorageFault | null = null;
  /** the audit log as a part of the storage guard (main/core/calls/storage-guard.ts) */
  readonly storage: StoragePart = {
    fault: () => this.refusing,
    probe: async () => this.refusing,
  };

  append(entry: AuditEntry): void {
    this.entries.push(entry);
  }

  async sync(): Promise<void> {
    await Promise.resolve();
    if (this.failNextSync) {
      const e = this.failNextSync;
      this.failNextSync = null;
      throw e;
    }
    this.synced = this.entries.length;
  }

  async hasStagedEntry(stagedId: string, result: AuditResult, sinceMs: number): Promise<boolean> {
    return this.entries
      .slice(0, this.synced)
      .some((e) => e.staged_id === stagedId && e.result === result && Date.parse(e.at) >= sinceMs - 3600_000);
  }

  /** what survives a kill: the synced entries only */
  crash(): void {
    this.entries = this.entries.slice(0, this.synced);
  }

  results(stagedId: string): string[] {
    return this.entries.filter((e) => e.staged_id === stagedId).map((e) => e.result);
  }

  async query(q: AuditQuery): Promise<AuditPage> {
    const all = this.matching(q).reverse();
    const start = Number(q.cursor ?? 0) || 0;
    const page = all.slice(start, start + q.limit);
    return { entries: page, next_cursor: start + q.limit < all.length ? String(start + q.limit) : null };
  }

  async export(
    q: Omit<AuditQueryInput, 'limit' | 'cursor'>,
    format: 'jsonl' | 'csv',
    out: NodeJS.WritableStream,
  ): Promise<number> {
    const entries = this.matching(AuditQuery.parse(q));
    if (format === 'csv') out.write(CSV_HEADER);
    for (const e of entries) out.write(format === 'csv' ? entryToCsvRow(e) : `${entryToJsonLine(e)}\n`);
    return entries.length;
  }

  private matching(q: Omit<AuditQuery, 'limit' | 'cursor'>): AuditEntry[] {
    return this.entries.filter(
      (e) =>
        (!q.tool || e.tool === q.tool) &&
        (!q.result || e.result === q.result) &&
        (!q.user_id || e.user_id === q.user_id) &&
        (!q.token_id || e.token_id === q.token_id) &&
        (!q.plugin || e.source_plugin === q.plugin) &&
        (!q.from || e.at >= q.from) &&
        (!q.to || e.at < q.to),
    );
  }
}

/** A vault in memory; `accounts` shows what was written where. */
export class MemoryVault implements Vault {
  readonly backend = 'file' as const;
  readonly accounts = new Map<string, string>();
  async get(account: string) {
    return this.accounts.get(account) ?? null;
  }
  async set(account: string, secret: string) {
    this.accounts.set(account, secret);
  }
  async delete(account: string) {
    return this.accounts.delete(account);
  }
}

/** The real policy engine over a memory options store: the person's policy (options.policy) or the shipped default. */
export const policyEngineOf = (options: MemoryStore<OptionsData>) =>
  createCedarEngine({ activeText: () => options.read().policy?.text ?? null });

/**
 * The real core, from the one assembly production runs (main/assemble-core.ts):
 * users, tokens, the registry with the built-in and site plugins, staging,
 * the pipeline with its policy gate and storage guard, and invoke, over
 * in-memory stores, a memory vault and a memory audit: no files, no
 * sockets, a clock the test moves.
 */
export async function openCore(opts: { consoleUrl?: string | null } = {}) {
  // Real time to start with: the console compares expiry times with the browser's clock.
  const clock = new TestClock(Date.now());
  const options = new MemoryStore(OptionsData.parse({}), OptionsData);
  const siteStore = new MemoryStore(emptySiteData(), SiteData);
  const audit = new MemoryAudit();
  const vault = new MemoryVault();
  const consoleUrl = opts.consoleUrl === undefined ? 'http://127.0.0.1:7823/console/' : opts.consoleUrl;
  const core = await assembleCore({
    clock,
    options,
    siteStore,
    staged: new MemoryStagedStore(),
    audit,
    vault,
    policyEngine: policyEngineOf(options),
    compileJson: jsonSchemaCompiler,
    auditSite: () => 'local',
    consoleUrl: () => consoleUrl,
    ai: NO_AI,
  });
  await core.calls.site.seedIfEmpty();
  await core.lifecycle.recover();
  const { users, tokens } = core.admin;

  /** A user with this role (created once per login) and a client token for it. */
  async function tokenFor(
    login: string,
    role: Role,
    scope: { read_only?: boolean; tools?: string[]; plugins?: string[] } = {},
  ) {
    const user: User = users.byLogin(login) ?? (await users.add(login, role));
    const created = await tokens.create(`${login} agent`, user, scope);
    const record = options.read().tokens.find((t) => t.id === created.record.id)!;
    return { user, token: created.token, record };
  }

  /** The call context an MCP request with this token would get, read now (role and scope as they are). */
  function ctxOf(tokenId: string, request_id = 'req-test'): CallContext {
    const record = options.read().tokens.find((t) => t.id === tokenId)!;
    const user = users.byId(record.user_id)!;
    return {
      user,
      capabilities: new Set(ROLE_CAPABILITIES[user.role]),
      token: record,
      request_id,
      client: 'test-agent',
    };
  }

  /** The principal of a client token over the local REST. */
  function restPrincipal(tokenId: string): Principal {
    const ctx = ctxOf(tokenId);
    return {
      kind: 'token',
      surface: 'rest',
      token_id: ctx.token!.id,
      token_preview: ctx.token!.preview,
      user_id: ctx.user.id,
      login: ctx.user.login,
    };
  }

  return {
    clock,
    options,
    siteStore,
    events: core.events,
    settings: core.settings,
    audit,
    vault,
    users,
    admin: core.admin.admin,
    tokens,
    profiles: core.admin.profiles,
    registry: core.calls.registry,
    stats: core.calls.stats,
    auditor: core.calls.auditor,
    staging: core.calls.staging,
    pipeline: core.calls.pipeline,
    listing: core.calls.listing,
    site: core.calls.site,
    sessions: core.admin.sessions,
    invoke: core.admin.invoke,
    /** the grouped facades of the assembly (calls, desk, admin, endpoint, lifecycle) */
    assembled: core,
    tokenFor,
    ctxOf,
    restPrincipal,
  };
}
export type Core = Awaited<ReturnType<typeof openCore>>;

// ---- staging on its own: a small "notes" plugin and restarts over the same stores ----

/** A place the notes plugin writes to; `applied` is its staged id -> result log, kept with the notes. */
export interface NotesState {
  notes: string[];
  applied: Map<string, ToolOutput>;
}

export type StopAt = 'none' | 'before-apply' | 'after-apply';

/** A write tool that applies idempotently by staged id, like the site plugin does, and can be made to stop mid-apply. */
export function notesPlugin(state: NotesState, opts: { stopAt?: () => StopAt; canTell?: boolean } = {}): Plugin {
  const never = new Promise<never>(() => undefined);
  const add = defineTool({
    name: 'notes_add',
    title: 'Add a note',
    description: 'Stage a note.',
    plugin: 'notes',
    feature: 'notes.write',
    capability: 'edit_pages',
    write: true,
    input: z.object({ text: z.string() }),
    async preview(input) {
      return {
        preview: { summary: `Add '${input.text.slice(0, 40)}'`, kind: 'diff' as const, changes: [] },
        payload: { text: input.text },
        target: null,
        target_version: null,
      };
    },
    async apply(payload, _ctx: CallContext, staged?: StagedRef) {
      if (opts.stopAt?.() === 'before-apply') return never;
      const done = staged && state.applied.get(staged.id);
      if (done) return done;
      state.notes.push(String(payload.text));
      const out = { structured: { count: state.notes.length, text: payload.text }, text: 'added' };
      if (staged) state.applied.set(staged.id, out);
      if (opts.stopAt?.() === 'after-apply') return never;
      return out;
    },
    ...(opts.canTell === false
      ? {}
      : {
          applied: async (staged: StagedRef): Promise<AppliedState> => {
            const out = state.applied.get(staged.id);
            return out ? { state: 'applied', output: out } : { state: 'not_applied' };
          },
        }),
  });
  return { id: 'notes', title: 'Notes', kind: 'site', tools: () => [add] };
}

export const ADMIN: User = {
  id: 'usr_admin',
  login: 'admin',
  display_name: 'Admin',
  role: 'administrator',
  created: '2026-01-01T00:00:00.000Z',
};
export const WRITER: User = {
  id: 'usr_writer',
  login: 'writer',
  display_name: 'Writer',
  role: 'contributor',
  created: '2026-01-01T00:00:00.000Z',
};

export function ctxFor(user: User, tokenId: string | null = 'tok_a'): CallContext {
  const token = tokenId
    ? {
        id: tokenId,
        label: tokenId,
        hash: '0'.repeat(64),
        user_id: user.id,
        preview: 'gth_…test',
        created: '2026-01-01T00:00:00.000Z',
        last_used: null,
        scope: { read_only: false },
      }
    : null;
  return { user, capabilities: capabilitiesOf(user.role), token, request_id: 'req-1', client: 'test-client' };
}

export interface CoreWorld {
  clock: TestClock;
  audit: MemoryAudit;
  store: MemoryStagedStore;
  notes: NotesState;
  stopAt: StopAt;
  events: EventHub;
  registry: Registry;
  staging: Staging;
  /** settings staging reads at decision time (approval_mode, disabled_tools) */
  settings: SettingsService;
  /** a new assembly over the same stores: what the next start sees */
  restart(opts?: { canTell?: boolean }): Promise<Staging>;
  /** resolves when the notes plugin's apply is next entered (a confirm got past its checks, the policy's included) */
  applying(): Promise<void>;
}

/** The tokens ctxFor makes, as the options hold them: a write they staged stands (staged-standing.ts). */
const WORLD_TOKENS = [
  ['tok_a', WRITER],
  ['tok_b', WRITER],
  ['tok_other', ADMIN],
] as const;

/**
 * Staging through the one assembly (main/assemble-core.ts) on in-memory stores, with the notes plugin alone;
 * `restart()` is a crash and a new start over the same stores.
 */
export async function coreWorld(
  opts: { limits?: Partial<StagingLimits>; lifetimeMs?: number; canTell?: boolean } = {},
): Promise<CoreWorld> {
  const clock = new TestClock(Date.parse('2026-11-22T10:00:00Z'));
  const audit = new MemoryAudit();
  const store = new MemoryStagedStore();
  const notes: NotesState = { notes: [], applied: new Map() };
  const options = new MemoryStore(
    {
      ...emptyOptions(),
      users: [ADMIN, WRITER],
      tokens: WORLD_TOKENS.map(([id, user]) => ctxFor(user, id).token!),
    },
    OptionsData,
  );
  const world = { clock, audit, store, notes, stopAt: 'none' as StopAt } as CoreWorld;
  let entered: (() => void) | null = null;
  world.applying = () => new Promise<void>((resolve) => (entered = resolve));
  const stopAt = () => {
    entered?.();
    entered = null;
    return world.stopAt;
  };
  const build = async (canTell = opts.canTell) => {
    const core = await assembleCore({
      clock,
      options,
      siteStore: new MemoryStore(emptySiteData(), SiteData),
      staged: store,
      audit,
      vault: new MemoryVault(),
      policyEngine: policyEngineOf(options),
      compileJson: jsonSchemaCompiler,
      auditSite: () => 'local',
      consoleUrl: () => null,
      ai: NO_AI,
      gatewayPlugins: false,
      plugins: [notesPlugin(notes, { stopAt, ...(canTell === undefined ? {} : { canTell }) })],
      ...(opts.limits ? { stagingLimits: opts.limits } : {}),
      ...(opts.lifetimeMs ? { stagedLifetimeMs: opts.lifetimeMs } : {}),
    });
    Object.assign(world, {
      events: core.events,
      registry: core.calls.registry,
      staging: core.calls.staging,
      settings: core.settings,
    });
    return core.calls.staging;
  };
  await build();
  world.restart = (o = {}) => {
    world.stopAt = 'none';
    audit.crash();
    return build(o.canTell ?? opts.canTell);
  };
  return world;
}

// ---- the registry and the pipeline: one user per role, plugins that change while running ----

export const userOf = (role: Role): User => ({
  id: `usr_${role}`,
  login: role === 'administrator' ? 'admin' : role,
  display_name: role,
  role,
  created: new Date(T0).toISOString(),
});

/** The call context of a `role` user; with a token narrowed by `scope` when one is given. */
export function ctxForRole(role: Role, scope: Partial<TokenScope> | null = null, signal?: AbortSignal): CallContext {
  const token: TokenRecord | null = scope
    ? {
        id: `tok_${role}`,
        label: role,
        hash: '0'.repeat(64),
        user_id: `usr_${role}`,
        preview: 'gth_…test',
        created: new Date(T0).toISOString(),
        last_used: null,
        scope: { read_only: false, ...scope },
      }
    : null;
  return {
    user: userOf(role),
    capabilities: new Set(ROLE_CAPABILITIES[role]),
    token,
    request_id: `req_${role}`,
    client: 'core-test',
    ...(signal ? { signal } : {}),
  };
}

/** A plugin whose tools tests change while it runs, through the host the registry gives it. */
export function runtimePlugin(id = 'runtime', initial: Tool[] = []) {
  let host: PluginHost | null = null;
  const calls: string[] = [];
  let signal: AbortSignal | null = null;
  const plugin: Plugin = {
    id,
    title: `Plugin ${id}`,
    kind: 'upstream',
    tools: () => initial,
    async start(h, s) {
      host = h;
      signal = s;
      calls.push('start');
    },
    async stop() {
      calls.push('stop');
    },
  };
  return {
    plugin,
    calls,
    get host(): PluginHost {
      if (!host) throw new Error('plugin not started');
      return host;
    },
    get signal() {
      return signal;
    },
  };
}

/** A read tool that echoes its input. */
export const echoTool = (name: string, plugin = 'runtime', over: Partial<Tool> = {}): Tool =>
  ({
    ...defineTool({
      name,
      title: `Echo ${name}`,
      description: 'echoes its input',
      plugin,
      capability: 'read',
      feature: 'mcp.core',
      write: false,
      input: z.object({ text: z.string().max(50).default('hi') }),
      run: async (input) => ({ structured: { echoed: input.text } }),
    }),
    ...over,
  }) as Tool;

/**
 * The call path from the one assembly production runs (main/assemble-core.ts: the policy gate, the storage guard,
 * the confirm policy) over an in-memory store with one user per role, and no plugins but the test's own.
 */
export async function pipelineCore(settings: Partial<Settings> = {}) {
  const store = new MemoryStore(
    {
      ...emptyOptions(),
      settings: { ...SETTINGS_DEFAULTS, ...settings },
      users: (['administrator', 'editor', 'author', 'contributor', 'subscriber'] as const).map(userOf),
    },
    OptionsData,
  );
  const clock = new TestClock(T0);
  const memoryAudit = new MemoryAudit();
  const usageEvents: UsageEvent[] = [];
  const core = await assembleCore({
    clock,
    options: store,
    siteStore: new MemoryStore(emptySiteData(), SiteData),
    staged: new MemoryStagedStore(),
    audit: memoryAudit,
    vault: new MemoryVault(),
    policyEngine: policyEngineOf(store),
    compileJson: jsonSchemaCompiler,
    auditSite: () => 'https://site.test/',
    consoleUrl: () => null,
    ai: NO_AI,
    gatewayPlugins: false,
    callTimeoutMs: 5_000,
    // a sink that stamps its site, as the cloud outbox does (the recorder owns id and time, the sink the site)
    usageSink: { record: (e) => void usageEvents.push({ ...e, site_id: 'site_test' }) },
  });
  const { registry, stats, usage, auditor, staging, pipeline } = core.calls;
  const events = core.events;
  const audit = memoryAudit.entries;
  return {
    store,
    clock,
    events,
    audit,
    usageEvents,
    registry,
    stats,
    usage,
    auditor,
    staging,
    pipeline,
    policy: core.calls.policy,
    listing: core.calls.listing,
    storage: core.calls.storage,
    /** the audit sink itself: `refusing` makes it a full disk to the storage guard */
    memoryAudit,
    assembled: core,
    setSettings: (patch: Partial<Settings>) => store.update((d) => void Object.assign(d.settings, patch)),
    lastAudit: () => audit[audit.length - 1]!,
  };
}
