import { z } from 'zod';
import type { Result } from './errors.ts';
import { Settings, SettingsPatch } from './settings.ts';
import { TokenCreateInput, TokenCreated, TokenView } from './tokens.ts';
import { Login, Role, User } from './users.ts';
import { SettleOutcome, StagedStatus, StagedView } from './staged.ts';
import { AuditEntry, AuditExportQuery, AuditPage, AuditQuery, Stats } from './audit.ts';
import { ADMIN_PREFIX, CloudHealth, HealthReport, REST_PREFIX } from './health.ts';
import { PluginInfo, ToolInfo } from './tools.ts';
import { PersonSurface } from './principal.ts';
import type { Capability } from './users.ts';
import { ProAccepted, ProEntitlements, ProLicense, ProLicenseKey, ProUsage } from './pro.ts';
import {
  CloudActivateInput,
  CloudConnectAnswer,
  CloudConnectInput,
  CloudDisconnectAnswer,
  CloudLicenseAnswer,
  CloudStatusView,
  CloudSyncAnswer,
  CloudUsageInput,
  CloudUsageView,
  UpdatesCheckInput,
  UpdatesView,
} from './cloud-actions.ts';
import { ProfileCreateInput, ProfileName, ProfileView } from './profiles.ts';
import { PolicyCheckAnswer, PolicyExplainAnswer, PolicyExplainInput, PolicyTextInput, PolicyView } from './policy.ts';
import { OAuthStatus } from './oauth-status.ts';
import {
  ClientConnectAnswer,
  ClientIdInput,
  ClientImportAnswer,
  ClientImportInput,
  ClientPlanInput,
  ClientPlanItem,
  ClientReportView,
  ClientRestoreAnswer,
} from './clients.ts';
import { ApprovalConfirm, ApprovalView, ByLink } from './approval-link.ts';
import {
  UpstreamAddInput,
  UpstreamDetail,
  UpstreamIdRef,
  UpstreamPromptView,
  UpstreamReviewInput,
  UpstreamGrantInput,
  UpstreamProcessSetInput,
  UpstreamRecipeInput,
  UpstreamRecipeRemoveInput,
  UpstreamTestAnswer,
  UpstreamToolView,
  UpstreamView,
} from './upstreams.ts';
import { RecipeView } from './preview-recipes.ts';
import { lazySchema } from './lazy-schema.ts';

const none = lazySchema(() => z.object({}).strict());
const byId = lazySchema(() => z.object({ id: z.string().min(1).max(200) }).strict());
const upstreamById = lazySchema(() => z.object({ id: UpstreamIdRef }).strict());
const profileByName = lazySchema(() => z.object({ name: ProfileName }).strict());

/**
 * Who may call an action: a person through one of `people`'s surfaces and,
 * only where `token` is named (read-only actions), an MCP client token that is
 * not narrowed to some tools and whose user has that capability. Checked by
 * `invoke` in main/core before anything else.
 */
export interface Who {
  readonly people: readonly PersonSurface[];
  readonly token?: Capability;
}
const PEOPLE: Who = { people: PersonSurface.options };
const PEOPLE_OR_READER: Who = { people: PersonSurface.options, token: 'manage_options' };

/** The answer of a `download` action: written by the transport to the HTTP answer or stdout. */
export interface Download {
  filename: string;
  content_type: string;
  write(out: NodeJS.WritableStream): Promise<unknown>;
}
/** The answer of an `events` action: a live feed until unsubscribed. */
export interface EventFeed {
  subscribe(listener: (event: ApiEvent) => void): () => void;
}

interface ActionDef {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** relative to ADMIN_PREFIX, or to REST_PREFIX when `base` is `rest`; `:param`s are filled from the input */
  path: string;
  input: z.ZodType;
  output: z.ZodType;
  who: Who;
  /** `rest`: the local REST (`{REST_PREFIX}/pro/...`), answering in its envelope (`{success, ...}`) */
  base?: 'rest';
  /** not a JSON answer: a download (HTTP + CLI) or a live event feed (SSE); not on IPC */
  stream?: 'download' | 'events';
}

/**
 * Every action on the service, once: the console's, the tray's, the CLI's
 * and the local REST's. The Electron preload, the IPC handlers, the HTTP
 * routes, the browser client and the CLI's HTTP client are all derived from
 * this table, never written twice by hand; `who` says which principals may
 * call each one (main/core/admin/invoke.ts checks it).
 */
export const API_ACTIONS = {
  'health.get': { method: 'GET', path: 'health', input: none, output: HealthReport, who: PEOPLE },
  'settings.get': { method: 'GET', path: 'settings', input: none, output: Settings, who: PEOPLE },
  'settings.update': { method: 'PATCH', path: 'settings', input: SettingsPatch, output: Settings, who: PEOPLE },
  'tokens.list': {
    method: 'GET',
    path: 'tokens',
    input: none,
    output: lazySchema(() => z.array(TokenView)),
    who: PEOPLE,
  },
  'tokens.create': { method: 'POST', path: 'tokens', input: TokenCreateInput, output: TokenCreated, who: PEOPLE },
  'tokens.revoke': {
    method: 'DELETE',
    path: 'tokens/:id',
    input: byId,
    output: lazySchema(() => z.object({ id: z.string() })),
    who: PEOPLE,
  },
  'users.list': { method: 'GET', path: 'users', input: none, output: lazySchema(() => z.array(User)), who: PEOPLE },
  'users.add': {
    method: 'POST',
    path: 'users',
    input: lazySchema(() =>
      z.object({ login: Login, role: Role, display_name: z.string().max(100).optional() }).strict(),
    ),
    output: User,
    who: PEOPLE,
  },
  'users.setRole': {
    method: 'PUT',
    path: 'users/:login/role',
    input: lazySchema(() => z.object({ login: Login, role: Role }).strict()),
    output: User,
    who: PEOPLE,
  },
  'staged.list': {
    method: 'GET',
    path: 'staged',
    input: lazySchema(() => z.object({ status: StagedStatus.optional() }).strict()),
    output: lazySchema(() => z.array(StagedView)),
    who: PEOPLE,
  },
  'staged.get': { method: 'GET', path: 'staged/:id', input: byId, output: StagedView, who: PEOPLE },
  /** `preview_hash`: the preview the person was shown (its `preview_hash`); a confirm of a write whose preview differs is refused as stale */
  'staged.confirm': {
    method: 'POST',
    path: 'staged/:id/confirm',
    input: lazySchema(() =>
      z
        .object({
          id: z.string().min(1).max(200),
          preview_hash: z
            .string()
            .regex(/^[0-9a-f]{64}$/, 'a sha256 hex digest')
            .optional(),
        })
        .strict(),
    ),
    output: StagedView,
    who: PEOPLE,
  },
  'staged.discard': { method: 'POST', path: 'staged/:id/discard', input: byId, output: StagedView, who: PEOPLE },
  /** a person's word on a write whose outcome is unknown: it was applied, or it was not (never re-sent); people only */
  'staged.settle': {
    method: 'POST',
    path: 'staged/:id/settle',
    input: lazySchema(() => z.object({ id: z.string().min(1).max(200), outcome: SettleOutcome }).strict()),
    output: StagedView,
    who: PEOPLE,
  },
  'audit.query': { method: 'GET', path: 'audit', input: AuditQuery, output: AuditPage, who: PEOPLE },
  'audit.export': {
    method: 'GET',
    path: 'audit/export',
    input: AuditExportQuery,
    output: lazySchema(() => z.custom<Download>()),
    who: PEOPLE,
    stream: 'download',
  },
  'stats.get': { method: 'GET', path: 'stats', input: none, output: Stats, who: PEOPLE },
  'tools.list': { method: 'GET', path: 'tools', input: none, output: lazySchema(() => z.array(ToolInfo)), who: PEOPLE },
  'plugins.list': {
    method: 'GET',
    path: 'plugins',
    input: none,
    output: lazySchema(() => z.array(PluginInfo)),
    who: PEOPLE,
  },
  'events.subscribe': {
    method: 'GET',
    path: 'events',
    input: none,
    output: lazySchema(() => z.custom<EventFeed>()),
    who: PEOPLE,
    stream: 'events',
  },
  /** a fresh one-time console login link, for `gatehouse console-link` (the admin key's holder) */
  'console.loginLink': {
    method: 'POST',
    path: 'login-link',
    input: none,
    output: lazySchema(() => z.object({ url: z.string() })),
    who: { people: ['cli'] },
  },
  /** ends the calling console session (the HTTP answer also clears its cookie) */
  'console.logout': {
    method: 'POST',
    path: 'logout',
    input: none,
    output: lazySchema(() => z.object({ ended: z.boolean() })),
    who: { people: ['console'] },
  },
  /**
   * The cloud client (main/cloud-client): people only. Shapes and meaning in
   * main/contract/cloud-actions.ts. Only connect/activate/deactivate/sync/
   * disconnect, cloud.usage and updates.check ask the gateway; cloud.status
   * and updates.status answer from what the service holds, with no request.
   */
  'cloud.status': { method: 'GET', path: 'cloud/status', input: none, output: CloudStatusView, who: PEOPLE },
  'cloud.connect': {
    method: 'POST',
    path: 'cloud/connect',
    input: CloudConnectInput,
    output: CloudConnectAnswer,
    who: PEOPLE,
  },
  'cloud.activate': {
    method: 'POST',
    path: 'cloud/activate',
    input: CloudActivateInput,
    output: CloudLicenseAnswer,
    who: PEOPLE,
  },
  'cloud.deactivate': {
    method: 'POST',
    path: 'cloud/deactivate',
    input: none,
    output: CloudLicenseAnswer,
    who: PEOPLE,
  },
  'cloud.sync': { method: 'POST', path: 'cloud/sync', input: none, output: CloudSyncAnswer, who: PEOPLE },
  'cloud.disconnect': {
    method: 'POST',
    path: 'cloud/disconnect',
    input: none,
    output: CloudDisconnectAnswer,
    who: PEOPLE,
  },
  'cloud.usage': { method: 'GET', path: 'cloud/usage', input: CloudUsageInput, output: CloudUsageView, who: PEOPLE },
  'updates.status': { method: 'GET', path: 'updates/status', input: none, output: UpdatesView, who: PEOPLE },
  'updates.check': {
    method: 'POST',
    path: 'updates/check',
    input: UpdatesCheckInput,
    output: UpdatesView,
    who: PEOPLE,
  },
  /** Upstream MCP servers (main/contract/upstreams.ts, docs/upstreams.md): people only, never a client token. */
  'upstreams.list': {
    method: 'GET',
    path: 'upstreams',
    input: none,
    output: lazySchema(() => z.array(UpstreamView)),
    who: PEOPLE,
  },
  'upstreams.get': { method: 'GET', path: 'upstreams/:id', input: upstreamById, output: UpstreamDetail, who: PEOPLE },
  'upstreams.add': { method: 'POST', path: 'upstreams', input: UpstreamAddInput, output: UpstreamDetail, who: PEOPLE },
  'upstreams.remove': {
    method: 'DELETE',
    path: 'upstreams/:id',
    input: upstreamById,
    output: lazySchema(() => z.object({ id: z.string() })),
    who: PEOPLE,
  },
  'upstreams.enable': {
    method: 'POST',
    path: 'upstreams/:id/enable',
    input: upstreamById,
    output: UpstreamView,
    who: PEOPLE,
  },
  'upstreams.disable': {
    method: 'POST',
    path: 'upstreams/:id/disable',
    input: upstreamById,
    output: UpstreamView,
    who: PEOPLE,
  },
  'upstreams.test': {
    method: 'POST',
    path: 'upstreams/:id/test',
    input: upstreamById,
    output: UpstreamTestAnswer,
    who: PEOPLE,
  },
  'upstreams.tools': {
    method: 'GET',
    path: 'upstreams/:id/tools',
    input: upstreamById,
    output: lazySchema(() => z.array(UpstreamToolView)),
    who: PEOPLE,
  },
  'upstreams.review': {
    method: 'POST',
    path: 'upstreams/:id/review',
    input: UpstreamReviewInput,
    output: lazySchema(() => z.array(UpstreamToolView)),
    who: PEOPLE,
  },
  /** replaces a stdio upstream's sandbox grants (docs/upstreams.md, "Confinement"); audited */
  'upstreams.grant': {
    method: 'POST',
    path: 'upstreams/:id/grant',
    input: UpstreamGrantInput,
    output: UpstreamDetail,
    who: PEOPLE,
  },
  /** sets whether a stdio upstream runs one process for every client or one per client token (docs/upstreams.md, "One process per client"); audited */
  'upstreams.process': {
    method: 'POST',
    path: 'upstreams/:id/process',
    input: UpstreamProcessSetInput,
    output: UpstreamDetail,
    who: PEOPLE,
  },
  /** the preview recipes of an upstream's writes, the person's and the shipped ones (docs/staging.md, "Recipes of your own") */
  'upstreams.recipes': {
    method: 'GET',
    path: 'upstreams/:id/recipes',
    input: upstreamById,
    output: lazySchema(() => z.array(RecipeView)),
    who: PEOPLE,
  },
  /** adds or replaces a person's preview recipe for one write tool; checked against the pinned definitions; audited */
  'upstreams.recipe_set': {
    method: 'POST',
    path: 'upstreams/:id/recipes',
    input: UpstreamRecipeInput,
    output: lazySchema(() => z.array(RecipeView)),
    who: PEOPLE,
  },
  /** removes a person's preview recipe (a shipped one of that tool applies again); audited */
  'upstreams.recipe_remove': {
    method: 'DELETE',
    path: 'upstreams/:id/recipes/:tool',
    input: UpstreamRecipeRemoveInput,
    output: lazySchema(() => z.array(RecipeView)),
    who: PEOPLE,
  },
  'upstreams.prompts': {
    method: 'GET',
    path: 'upstreams/:id/prompts',
    input: upstreamById,
    output: lazySchema(() => z.array(UpstreamPromptView)),
    who: PEOPLE,
  },
  /** OAuth sign-in of a remote upstream (docs/oauth.md): people only; `wait_ms` holds the answer until the sign-in ends (at most 60 s). */
  'upstreams.oauth': {
    method: 'POST',
    path: 'upstreams/:id/oauth',
    input: lazySchema(() =>
      z.object({ id: UpstreamIdRef, wait_ms: z.number().int().min(0).max(60_000).default(0) }).strict(),
    ),
    output: OAuthStatus,
    who: PEOPLE,
  },
  'upstreams.login': {
    method: 'POST',
    path: 'upstreams/:id/login',
    input: upstreamById,
    output: OAuthStatus,
    who: PEOPLE,
  },
  'upstreams.logout': {
    method: 'POST',
    path: 'upstreams/:id/logout',
    input: upstreamById,
    output: OAuthStatus,
    who: PEOPLE,
  },
  /** MCP clients on this machine (docs/clients.md): import their servers, point them at Gatehouse, undo it. People only. */
  'clients.list': {
    method: 'GET',
    path: 'clients',
    input: none,
    output: lazySchema(() => z.array(ClientReportView)),
    who: PEOPLE,
  },
  'clients.plan': {
    method: 'POST',
    path: 'clients/:client/plan',
    input: ClientPlanInput,
    output: lazySchema(() => z.array(ClientPlanItem)),
    who: PEOPLE,
  },
  'clients.import': {
    method: 'POST',
    path: 'clients/:client/import',
    input: ClientImportInput,
    output: ClientImportAnswer,
    who: PEOPLE,
  },
  'clients.connect': {
    method: 'POST',
    path: 'clients/:client/connect',
    input: ClientIdInput,
    output: ClientConnectAnswer,
    who: PEOPLE,
  },
  'clients.restore': {
    method: 'POST',
    path: 'clients/:client/restore',
    input: ClientIdInput,
    output: ClientRestoreAnswer,
    who: PEOPLE,
  },
  /** Profiles: named tool sets tokens are bound to (main/contract/profiles.ts): people only, never a client token. */
  'profiles.list': {
    method: 'GET',
    path: 'profiles',
    input: none,
    output: lazySchema(() => z.array(ProfileView)),
    who: PEOPLE,
  },
  'profiles.get': { method: 'GET', path: 'profiles/:name', input: profileByName, output: ProfileView, who: PEOPLE },
  'profiles.create': { method: 'POST', path: 'profiles', input: ProfileCreateInput, output: ProfileView, who: PEOPLE },
  'profiles.remove': {
    method: 'DELETE',
    path: 'profiles/:name',
    input: profileByName,
    output: lazySchema(() => z.object({ name: z.string() })),
    who: PEOPLE,
  },
  /** The tool-call policy (Cedar, docs/policy.md): people only, never a client token; no MCP tool reads or changes it. */
  'policy.get': { method: 'GET', path: 'policy', input: none, output: PolicyView, who: PEOPLE },
  'policy.check': {
    method: 'POST',
    path: 'policy/check',
    input: PolicyTextInput,
    output: PolicyCheckAnswer,
    who: PEOPLE,
  },
  'policy.set': { method: 'PUT', path: 'policy', input: PolicyTextInput, output: PolicyView, who: PEOPLE },
  'policy.explain': {
    method: 'POST',
    path: 'policy/explain',
    input: PolicyExplainInput,
    output: PolicyExplainAnswer,
    who: PEOPLE,
  },
  'pro.cloudStatus': {
    method: 'GET',
    path: 'pro/cloud/status',
    base: 'rest',
    input: none,
    output: CloudHealth,
    who: PEOPLE_OR_READER,
  },
  'pro.license': {
    method: 'GET',
    path: 'pro/license',
    base: 'rest',
    input: none,
    output: ProLicense,
    who: PEOPLE_OR_READER,
  },
  'pro.entitlements': {
    method: 'GET',
    path: 'pro/entitlements',
    base: 'rest',
    input: none,
    output: ProEntitlements,
    who: PEOPLE_OR_READER,
  },
  'pro.usage': { method: 'GET', path: 'pro/usage', base: 'rest', input: none, output: ProUsage, who: PEOPLE_OR_READER },
  'pro.licenseActivate': {
    method: 'POST',
    path: 'pro/license/activate',
    base: 'rest',
    input: ProLicenseKey,
    output: ProAccepted,
    who: PEOPLE,
  },
  'pro.licenseDeactivate': {
    method: 'POST',
    path: 'pro/license/deactivate',
    base: 'rest',
    input: none,
    output: ProAccepted,
    who: PEOPLE,
  },
  'pro.cloudSync': {
    method: 'POST',
    path: 'pro/cloud/sync',
    base: 'rest',
    input: none,
    output: ProAccepted,
    who: PEOPLE,
  },
  /** The page of one approval link (docs/tasks.md): that write only, people only (a console session), never a client token. */
  'approval.get': { method: 'GET', path: 'approval/:link', input: ByLink, output: ApprovalView, who: PEOPLE },
  'approval.confirm': {
    method: 'POST',
    path: 'approval/:link/confirm',
    input: ApprovalConfirm,
    output: ApprovalView,
    who: PEOPLE,
  },
  'approval.discard': {
    method: 'POST',
    path: 'approval/:link/discard',
    input: ByLink,
    output: ApprovalView,
    who: PEOPLE,
  },
} as const satisfies Record<string, ActionDef>;

export type ApiActions = typeof API_ACTIONS;
/** Every action, streams included. */
export type AnyAction = keyof ApiActions;
/** Actions that answer with a download or a live feed instead of JSON. */
export type StreamAction = { [K in AnyAction]: ApiActions[K] extends { stream: string } ? K : never }[AnyAction];
/** Actions with a JSON answer: the console's Api, IPC, the tray, the CLI. */
export type ApiAction = Exclude<AnyAction, StreamAction>;
export type ApiInput<A extends AnyAction> = z.input<ApiActions[A]['input']>;
export type ApiOutput<A extends AnyAction> = z.infer<ApiActions[A]['output']>;

export const ALL_ACTIONS = Object.keys(API_ACTIONS) as AnyAction[];
/** The JSON actions, derived: what the preload exposes and IPC registers. */
export const RPC_ACTIONS = ALL_ACTIONS.filter((a) => !('stream' in API_ACTIONS[a])) as ApiAction[];

/** Where an action lives over HTTP: the admin API, or the local REST. */
export const actionPrefix = (action: AnyAction): string => ('base' in API_ACTIONS[action] ? REST_PREFIX : ADMIN_PREFIX);

/** The console's only way to the service: the Electron preload or the browser's admin REST. */
export type ApiMethods = { [A in ApiAction]: (input: ApiInput<A>) => Promise<Result<ApiOutput<A>>> };
export type Api = ApiMethods & {
  /** Live updates: IPC events in Electron, SSE in a browser. Returns an unsubscribe function. */
  subscribe(listener: (event: ApiEvent) => void): () => void;
};

/** Live updates pushed to the console. */
export const ApiEvent = lazySchema(() =>
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('staged'), item: StagedView }),
    z.object({ type: z.literal('audit'), entry: AuditEntry }),
    z.object({ type: z.literal('settings'), settings: Settings }),
    z.object({ type: z.literal('health') }),
  ]),
);
export type ApiEvent = z.infer<typeof ApiEvent>;

export const API_EVENTS_PATH = API_ACTIONS['events.subscribe'].path;
/** Required on state-changing admin calls made with the session cookie (a cross-site form cannot send it). */
export const CSRF_HEADER = 'X-Gatehouse-CSRF';
/** IPC channel for an action; events go out on `gatehouse:event`. */
export const ipcChannel = (action: ApiAction): string => `gatehouse:${action}`;
export const IPC_EVENT_CHANNEL = 'gatehouse:event';
/** The desktop console's audit export: the main process streams the whole log into a file the person chose (main/app/audit-export-file.ts). */
export const AUDIT_EXPORT_FILE_CHANNEL = 'gatehouse:audit.export-file';
/** Where the export went: null when the person cancelled the save dialog. */
export interface AuditExportSaved {
  path: string | null;
  bytes: number;
}
/** `window.gatehouse` in the app's window: the Api, and the export into a file (main/app/preload.ts). */
export type DesktopApi = Api & {
  exportAuditFile(input: ApiInput<'audit.export'>): Promise<Result<AuditExportSaved>>;
};

/**
 * One principal's way into the core (main/core/admin/invoke.ts bound to a caller:
 * the tray, the CLI, a test): raw input in, checked there, Result out.
 */
export type ApiDispatch = <A extends ApiAction>(action: A, input: ApiInput<A>) => Promise<Result<ApiOutput<A>>>;

/** The same, for a transport whose input is not yet checked (IPC): invoke checks it against the action's schema. */
export type RawDispatch = <A extends ApiAction>(action: A, rawInput: unknown) => Promise<Result<ApiOutput<A>>>;
