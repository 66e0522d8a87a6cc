import { z } from 'zod';
import type { Result } from './errors.ts';
import { Settings, SettingsPatch } from './settings.ts';
import { TokenCreateInput, TokenCreated, TokenView } from './tokens.ts';
import { Login, Role, User } from './users.ts';
import { StagedPayload, StagedStatus } from './staged.ts';
import { AuditEntry, AuditPage, AuditQuery, Stats } from './audit.ts';
import { HealthReport } from './health.ts';
import { PluginInfo, ToolInfo } from './tools.ts';

const none = z.object({}).strict();
const byId = z.object({ id: z.string().min(1) }).strict();

/**
 * Every console/admin action, once. The Electron preload, the IPC handlers,
 * the admin REST routes and the browser client are all derived from this
 * table, never written twice by hand. `path` is relative to ADMIN_PREFIX;
 * `:id` is filled from the input.
 */
export const API_ACTIONS = {
  'health.get': { method: 'GET', path: 'health', input: none, output: HealthReport },
  'settings.get': { method: 'GET', path: 'settings', input: none, output: Settings },
  'settings.update': { method: 'PATCH', path: 'settings', input: SettingsPatch, output: Settings },
  'tokens.list': { method: 'GET', path: 'tokens', input: none, output: z.array(TokenView) },
  'tokens.create': { method: 'POST', path: 'tokens', input: TokenCreateInput, output: TokenCreated },
  'tokens.revoke': { method: 'DELETE', path: 'tokens/:id', input: byId, output: z.object({ id: z.string() }) },
  'users.list': { method: 'GET', path: 'users', input: none, output: z.array(User) },
  'users.add': {
    method: 'POST', path: 'users',
    input: z.object({ login: Login, role: Role, display_name: z.string().max(100).optional() }).strict(),
    output: User,
  },
  'users.setRole': { method: 'PUT', path: 'users/:login/role', input: z.object({ login: Login, role: Role }).strict(), output: User },
  'staged.list': {
    method: 'GET', path: 'staged',
    input: z.object({ status: StagedStatus.optional() }).strict(),
    output: z.array(StagedPayload),
  },
  'staged.get': { method: 'GET', path: 'staged/:id', input: byId, output: StagedPayload },
  'staged.confirm': { method: 'POST', path: 'staged/:id/confirm', input: byId, output: StagedPayload },
  'staged.discard': { method: 'POST', path: 'staged/:id/discard', input: byId, output: StagedPayload },
  'audit.query': { method: 'GET', path: 'audit', input: AuditQuery, output: AuditPage },
  'stats.get': { method: 'GET', path: 'stats', input: none, output: Stats },
  'tools.list': { method: 'GET', path: 'tools', input: none, output: z.array(ToolInfo) },
  'plugins.list': { method: 'GET', path: 'plugins', input: none, output: z.array(PluginInfo) },
} as const;

export type ApiActions = typeof API_ACTIONS;
export type ApiAction = keyof ApiActions;
export type ApiInput<A extends ApiAction> = z.input<ApiActions[A]['input']>;
export type ApiOutput<A extends ApiAction> = z.infer<ApiActions[A]['output']>;

/** The console's only way to the service: the Electron preload or the browser's admin REST. */
export type Api = { [A in ApiAction]: (input: ApiInput<A>) => Promise<Result<ApiOutput<A>>> } & {
  /** Live updates: IPC events in Electron, SSE in a browser. Returns an unsubscribe function. */
  subscribe(listener: (event: ApiEvent) => void): () => void;
};

/** Live updates pushed to the console. */
export const ApiEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('staged'), item: StagedPayload }),
  z.object({ type: z.literal('audit'), entry: AuditEntry }),
  z.object({ type: z.literal('settings'), settings: Settings }),
  z.object({ type: z.literal('health') }),
]);
export type ApiEvent = z.infer<typeof ApiEvent>;

export const API_EVENTS_PATH = 'events';
/** GET {ADMIN_PREFIX}/audit/export?format=csv|jsonl&<AuditQuery filters>: a download. */
export const AUDIT_EXPORT_PATH = 'audit/export';
/** Required on state-changing admin calls made with the session cookie (a cross-site form cannot send it). */
export const CSRF_HEADER = 'X-Gatehouse-CSRF';
/** IPC channel for an action; events go out on `gatehouse:event`. */
export const ipcChannel = (action: ApiAction): string => `gatehouse:${action}`;
export const IPC_EVENT_CHANNEL = 'gatehouse:event';

/** Fill `:param` segments of an action's path from its input; the rest becomes query or body. */
export function actionPath(action: ApiAction, input: Record<string, unknown>): { path: string; rest: Record<string, unknown> } {
  const rest = { ...input };
  const path = API_ACTIONS[action].path.replace(/:([a-z_]+)/g, (_m, key: string) => {
    const value = rest[key];
    delete rest[key];
    return encodeURIComponent(String(value ?? ''));
  });
  return { path, rest };
}

/**
 * How the Electron shell's IPC registrar (and the admin REST) reach the core:
 * one function for every action, called with input the caller has already
 * validated against the action's schema.
 */
export type ApiDispatch = <A extends ApiAction>(
  action: A,
  input: z.output<ApiActions[A]['input']>,
) => Promise<Result<ApiOutput<A>>>;
