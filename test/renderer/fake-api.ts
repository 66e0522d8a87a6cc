import { cloudHandlers, initialCloud } from './fake-cloud.ts';
import type { FakeCloudState } from './fake-cloud.ts';
import { clientHandlers, initialClients, type FakeClientsState } from './fake-clients.ts';
import {
  API_ACTIONS,
  DEFAULT_TOKEN_USER,
  PRINCIPALS,
  RPC_ACTIONS,
  SETTINGS_DEFAULTS,
  SettingsPatch,
} from '../../main/contract/index.ts';
import type {
  Api,
  ApiAction,
  ApiEvent,
  ApiInput,
  ApiOutput,
  AuditEntry,
  ErrorCode,
  HealthReport,
  PluginInfo,
  Result,
  Settings,
  StagedView,
  Stats,
  TokenView,
  ToolInfo,
  User,
} from '../../main/contract/index.ts';

/**
 * An in-memory Api: the console's one boundary, replaced for component tests.
 * It keeps state like the service does (a confirm changes the staged item and
 * emits a `staged` event), and lets a test make any action fail or hang.
 * Held to the contract: every input a screen sends is parsed with the
 * action's input schema, and every answer with its output schema, so the fake
 * cannot drift from what the service answers (screens that need the
 * service's behaviour run on the real core: core-api.ts).
 */
export interface FakeState {
  settings: Settings;
  tokens: TokenView[];
  users: User[];
  staged: StagedView[];
  audit: AuditEntry[];
  stats: Stats;
  health: HealthReport;
  tools: ToolInfo[];
  plugins: PluginInfo[];
  cloud: FakeCloudState;
  clients: FakeClientsState;
}

const T0 = Date.parse('2026-11-22T08:00:00Z');
export const iso = (ms: number) => new Date(ms).toISOString();

export function makeStaged(i: number, over: Partial<StagedView> = {}, now = Date.now()): StagedView {
  return {
    id: `stg_${String(i).padStart(4, '0')}`,
    tool: 'pages_update',
    plugin: 'site',
    payload: { id: i, title: `Page ${i} v2` },
    preview: {
      summary: `Update page ${i}`,
      kind: 'diff',
      changes: [{ field: 'title', before: `Page ${i}`, after: `Page ${i} v2` }],
    },
    user_id: 'u_admin',
    token_id: 'tok_1',
    token_label: 'Claude Desktop',
    client: 'claude-ai/1.0',
    client_source: 'request',
    request_id: `req_${i}`,
    created: iso(now - 60_000),
    expires_at: iso(now + 14 * 60_000 + i * 1000),
    payload_hash: 'a'.repeat(64),
    target: `page:${i}`,
    target_version: 1,
    status: 'pending',
    decided_at: null,
    decided_by: null,
    error_code: null,
    ...over,
  };
}

/** The fake's opaque audit cursor for a position (the service's are opaque too: a screen only hands them back). */
export const auditCursor = (offset: number): string => btoa(JSON.stringify({ offset }));

export function makeAudit(i: number, over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: `aud_${String(i).padStart(5, '0')}`,
    at: iso(T0 + i * 1000),
    request_id: `req_${i}`,
    tool: i % 2 ? 'pages_get' : 'pages_update',
    write: i % 2 === 0,
    result: i % 2 ? 'ok' : 'staged',
    error_code: null,
    source_plugin: 'site',
    feature_key: 'site.pages.read',
    site: 'local',
    token_id: 'tok_1',
    token_preview: 'gth_…abcd',
    user_id: 'u_admin',
    target: `page:${i}`,
    duration_ms: 3.2,
    client: 'claude-ai/1.0',
    staged_id: null,
    ...over,
  };
}

export function makeHealth(over: Partial<HealthReport> = {}): HealthReport {
  return {
    name: 'gatehouse',
    version: '0.1.0',
    enabled: false,
    base_url: 'http://127.0.0.1:7823',
    mcp_url: 'http://127.0.0.1:7823/wp-json/gatehouse-mcp/v1/mcp',
    console_url: 'http://127.0.0.1:7823/console/',
    data_dir: '/tmp/gatehouse',
    vault: { backend: 'keychain', label: 'Secret Service' },
    bridge: { command: '/usr/bin/node', args: ['/opt/gatehouse/bin/gatehouse-bridge.mjs'], platform: 'linux' },
    pending_approvals: 0,
    recent_clients: [],
    cloud: {
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
    },
    warnings: [],
    ...over,
  };
}

export function initialState(over: Partial<FakeState> = {}): FakeState {
  return {
    settings: { ...SETTINGS_DEFAULTS },
    tokens: [],
    users: [{ id: 'u_admin', login: 'admin', display_name: 'Admin', role: 'administrator', created: iso(T0) }],
    staged: [],
    audit: [],
    stats: { since: null, tools: {}, hourly: {}, usage: {} },
    health: makeHealth(),
    tools: [
      {
        name: 'pages_get',
        title: 'Get a page',
        description: '',
        plugin: 'site',
        capability: 'read',
        feature: 'site.pages.read',
        write: false,
        disabled: false,
      },
      {
        name: 'pages_update',
        title: 'Update a page',
        description: '',
        plugin: 'site',
        capability: 'edit_pages',
        feature: 'site.pages.write',
        write: true,
        disabled: false,
      },
    ],
    plugins: [],
    cloud: initialCloud(),
    clients: initialClients(),
    ...over,
  };
}

/** The console's screens use no pro.* or console.* action: those answer not_found here. */
type ScreenAction = Exclude<ApiAction, `pro.${string}` | `console.${string}`>;
type Handlers = { [A in ScreenAction]: (input: ApiInput<A>) => ApiOutput<A> };
class Refusal {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
    readonly details?: Record<string, unknown>,
  ) {}
}

export class FakeApi {
  readonly state: FakeState;
  readonly calls: { action: ApiAction; input: unknown }[] = [];
  private readonly failures = new Map<
    ApiAction,
    { code: ErrorCode; message: string; details?: Record<string, unknown> }
  >();
  private readonly held = new Map<ApiAction, { promise: Promise<void>; release: () => void }>();
  private readonly listeners = new Set<(e: ApiEvent) => void>();
  readonly api: Api;

  constructor(over: Partial<FakeState> = {}) {
    this.state = initialState(over);
    const handlers = this.handlers();
    const api: Record<string, unknown> = {};
    for (const action of RPC_ACTIONS) {
      api[action] = async (input: unknown): Promise<Result<unknown>> => {
        this.calls.push({ action, input });
        const hold = this.held.get(action);
        if (hold) await hold.promise;
        const failure = this.failures.get(action);
        if (failure) return { ok: false, ...failure };
        try {
          const handler = (handlers as Partial<Record<ApiAction, (i: unknown) => unknown>>)[action];
          if (!handler) throw new Refusal('not_found', `the fake API has no ${action}`);
          const parsed = API_ACTIONS[action].input.safeParse(input ?? {});
          if (!parsed.success)
            throw new Error(`the console sent ${action} an input the contract refuses: ${parsed.error.message}`);
          const data = structuredClone(handler(parsed.data));
          const answer = API_ACTIONS[action].output.safeParse(data);
          if (!answer.success)
            throw new Error(`the fake answered ${action} with what the contract refuses: ${answer.error.message}`);
          return { ok: true, data };
        } catch (e) {
          if (e instanceof Refusal)
            return { ok: false, code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
          throw e;
        }
      };
    }
    api.subscribe = (listener: (e: ApiEvent) => void) => {
      this.listeners.add(listener);
      return () => this.listeners.delete(listener);
    };
    this.api = api as Api;
  }

  fail(
    action: ApiAction,
    code: ErrorCode = 'internal_error',
    message = `${action} failed on purpose`,
    details?: Record<string, unknown>,
  ): this {
    this.failures.set(action, { code, message, ...(details ? { details } : {}) });
    return this;
  }

  heal(action: ApiAction): this {
    this.failures.delete(action);
    return this;
  }

  /** Keep `action` from answering until `release(action)`. */
  hold(action: ApiAction): this {
    let release = () => {};
    const promise = new Promise<void>((r) => (release = r));
    this.held.set(action, { promise, release });
    return this;
  }

  release(action: ApiAction): void {
    this.held.get(action)?.release();
    this.held.delete(action);
  }

  emit(event: ApiEvent): void {
    for (const l of [...this.listeners]) l(event);
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  callsTo(action: ApiAction): unknown[] {
    return this.calls.filter((c) => c.action === action).map((c) => c.input);
  }

  private decide(id: string, status: 'confirmed' | 'discarded'): StagedView {
    const item = this.state.staged.find((s) => s.id === id);
    if (!item) throw new Refusal('staged_not_found', `no staged write ${id}`);
    if (item.status !== 'pending') throw new Refusal('staged_already_decided', `${id} is already ${item.status}`);
    item.status = status;
    item.decided_at = new Date().toISOString();
    item.decided_by = PRINCIPALS.appConsole;
    this.emit({ type: 'staged', item: structuredClone(item) });
    return item;
  }

  private handlers(): Handlers {
    const s = this.state;
    return {
      'health.get': () => ({
        ...s.health,
        enabled: s.settings.enabled,
        pending_approvals: s.staged.filter((x) => x.status === 'pending').length,
      }),
      'settings.get': () => s.settings,
      'settings.update': (patch) => {
        s.settings = { ...s.settings, ...SettingsPatch.parse(patch) };
        this.emit({ type: 'settings', settings: structuredClone(s.settings) });
        return s.settings;
      },
      'tokens.list': () => s.tokens,
      'tokens.create': (input) => {
        // As the service: no user named means the least-privileged token user, made on first use.
        if (!input.user && !s.users.some((u) => u.login === DEFAULT_TOKEN_USER.login)) {
          s.users.push({
            id: `u_${DEFAULT_TOKEN_USER.login}`,
            ...DEFAULT_TOKEN_USER,
            created: new Date().toISOString(),
          });
        }
        const user = s.users.find((u) => u.login === (input.user ?? DEFAULT_TOKEN_USER.login));
        if (!user) throw new Refusal('not_found', `no user ${input.user}`);
        const token = `gth_${'A'.repeat(39)}${String(s.tokens.length).padStart(4, '0')}`;
        const record: TokenView = {
          id: `tok_${s.tokens.length + 1}`,
          label: input.label.trim(),
          user_id: user.id,
          user_login: user.login,
          preview: `gth_…${token.slice(-4)}`,
          created: new Date().toISOString(),
          last_used: null,
          scope: { read_only: input.scope?.read_only ?? false },
        };
        s.tokens.push(record);
        return { token, record, ...(input.keychain_account ? { keychain_account: input.keychain_account } : {}) };
      },
      'tokens.revoke': ({ id }) => {
        const at = s.tokens.findIndex((t) => t.id === id);
        if (at === -1) throw new Refusal('not_found', `no token ${id}`);
        s.tokens.splice(at, 1);
        return { id };
      },
      'users.list': () => s.users,
      'users.add': (input) => {
        const user: User = {
          id: `u_${input.login}`,
          login: input.login,
          display_name: input.display_name ?? input.login,
          role: input.role,
          created: new Date().toISOString(),
        };
        s.users.push(user);
        return user;
      },
      'users.setRole': ({ login, role }) => {
        const user = s.users.find((u) => u.login === login);
        if (!user) throw new Refusal('not_found', `no user ${login}`);
        user.role = role;
        return user;
      },
      'staged.list': ({ status }) => s.staged.filter((x) => !status || x.status === status),
      'staged.get': ({ id }) => {
        const item = s.staged.find((x) => x.id === id);
        if (!item) throw new Refusal('staged_not_found', `no staged write ${id}`);
        return item;
      },
      'staged.confirm': ({ id }) => this.decide(id, 'confirmed'),
      'staged.discard': ({ id }) => this.decide(id, 'discarded'),
      'staged.settle': ({ id }) => {
        throw new Refusal('staged_not_found', `no staged write ${id}`);
      },
      'audit.query': (q) => {
        const all = s.audit
          .filter(
            (e) =>
              (!q.tool || e.tool === q.tool) &&
              (!q.result || e.result === q.result) &&
              (!q.user_id || e.user_id === q.user_id),
          )
          .sort((a, b) => b.at.localeCompare(a.at));
        // Opaque, as the service's (main/store/audit/log.ts encodes a position): a screen only hands it back.
        const start = q.cursor ? Number((JSON.parse(atob(q.cursor)) as { offset: number }).offset) : 0;
        const limit = q.limit ?? 50;
        const entries = all.slice(start, start + limit);
        return { entries, next_cursor: start + limit < all.length ? auditCursor(start + limit) : null };
      },
      'stats.get': () => s.stats,
      'tools.list': () => s.tools.map((t) => ({ ...t, disabled: s.settings.disabled_tools.includes(t.name) })),
      'plugins.list': () => s.plugins,
      // No upstreams in the console's fixtures: the list is empty and every one is unknown.
      'upstreams.list': () => [],
      'profiles.list': () => [],
      ...clientHandlers(s.clients),
      // No approval links in the console's fixtures (test/e2e/approval-link.e2e.test.ts drives the real ones).
      ...(Object.fromEntries(
        (['approval.get', 'approval.confirm', 'approval.discard'] as const).map((a) => [
          a,
          () => {
            throw new Refusal('not_found', 'no write has this approval link');
          },
        ]),
      ) as unknown as Pick<Handlers, 'approval.get' | 'approval.confirm' | 'approval.discard'>),
      // The Policy screen's tests run on the real core and engine (core-api.ts): the fake has no policy.
      ...(Object.fromEntries(
        (['policy.get', 'policy.check', 'policy.set', 'policy.explain'] as const).map((a) => [
          a,
          () => {
            throw new Refusal('service_unavailable', 'the fake API has no policy engine');
          },
        ]),
      ) as unknown as Pick<Handlers, 'policy.get' | 'policy.check' | 'policy.set' | 'policy.explain'>),
      ...(Object.fromEntries(
        (['profiles.get', 'profiles.create', 'profiles.remove'] as const).map((a) => [
          a,
          () => {
            throw new Refusal('not_found', 'no such profile');
          },
        ]),
      ) as unknown as Pick<Handlers, 'profiles.get' | 'profiles.create' | 'profiles.remove'>),
      ...(Object.fromEntries(
        (
          [
            'upstreams.get',
            'upstreams.add',
            'upstreams.remove',
            'upstreams.enable',
            'upstreams.disable',
            'upstreams.test',
            'upstreams.tools',
            'upstreams.review',
            'upstreams.prompts',
            'upstreams.grant',
            'upstreams.process',
            'upstreams.recipes',
            'upstreams.recipe_set',
            'upstreams.recipe_remove',
            'upstreams.oauth',
            'upstreams.login',
            'upstreams.logout',
          ] as const
        ).map((a) => [
          a,
          () => {
            throw new Refusal('not_found', 'no such upstream');
          },
        ]),
      ) as unknown as Pick<
        Handlers,
        | 'upstreams.get'
        | 'upstreams.add'
        | 'upstreams.remove'
        | 'upstreams.enable'
        | 'upstreams.disable'
        | 'upstreams.test'
        | 'upstreams.tools'
        | 'upstreams.review'
        | 'upstreams.prompts'
        | 'upstreams.grant'
        | 'upstreams.process'
        | 'upstreams.recipes'
        | 'upstreams.recipe_set'
        | 'upstreams.recipe_remove'
        | 'upstreams.oauth'
        | 'upstreams.login'
        | 'upstreams.logout'
      >),
      ...cloudHandlers(
        s,
        (e) => this.emit(e),
        (code, message, details) => {
          throw new Refusal(code, message, details);
        },
      ),
    };
  }
}
