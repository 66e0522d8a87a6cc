import type { z } from 'zod';
import type { ApiAction, ApiActions, ApiDispatch, ApiOutput } from '../contract/api.ts';
import type { HealthReport } from '../contract/health.ts';
import type { AuditReader, Vault } from './ports.ts';
import type { Users } from './users.ts';
import type { Tokens } from './tokens.ts';
import type { Staging } from './staging.ts';
import type { Registry } from './registry.ts';
import type { SettingsService } from './settings-service.ts';
import type { StatsRecorder } from './stats.ts';
import { capabilitiesOf } from './users.ts';
import { GatehouseError, toErrorShape } from './errors.ts';

export interface AdminDeps {
  users: Users;
  tokens: Tokens;
  staging: Staging;
  registry: Registry;
  settings: SettingsService;
  stats: StatsRecorder;
  audit: AuditReader;
  vault: Vault;
  health: () => HealthReport;
  /** who is acting, for staged decisions ("admin", "console", ...) */
  actor: () => string;
}

/**
 * Every console/admin action against the core, once. The admin REST routes,
 * the Electron IPC registrar and the offline CLI all call this; inputs have
 * already been validated against API_ACTIONS by the caller.
 */
export function createAdminDispatch(deps: AdminDeps): ApiDispatch {
  const { users, tokens, staging, registry, settings } = deps;
  const person = () => ({ kind: 'person' as const, login: deps.actor() });

  const handlers: { [A in ApiAction]: (input: z.output<ApiActions[A]['input']>) => Promise<ApiOutput<A>> } = {
    'health.get': async () => deps.health(),
    'settings.get': async () => settings.get(),
    'settings.update': async (input) => settings.update(input),
    'tokens.list': async () => tokens.list(),
    'tokens.create': async (input) => {
      const user = input.user ? users.require(input.user) : users.list().find((u) => u.login === 'admin') ?? users.list().find((u) => u.role === 'administrator');
      if (!user) throw new GatehouseError('not_found', 'no administrator user exists');
      checkScope(input.scope, user.role, registry);
      const created = await tokens.create(input.label, user, input.scope ?? {});
      if (input.keychain_account) {
        try {
          await deps.vault.set(input.keychain_account, created.token);
        } catch (e) {
          await tokens.revoke(created.record.id);
          throw new GatehouseError('vault_unavailable', `could not save the token to the ${deps.vault.backend}: ${toErrorShape(e).message}; no token was created`);
        }
      }
      return { ...created, ...(input.keychain_account ? { keychain_account: input.keychain_account } : {}) };
    },
    'tokens.revoke': async (input) => {
      await tokens.revoke(input.id);
      return { id: input.id };
    },
    'users.list': async () => users.list(),
    'users.add': async (input) => users.add(input.login, input.role, input.display_name),
    'users.setRole': async (input) => users.setRole(input.login, input.role),
    'staged.list': async (input) => staging.list(input.status ? { status: input.status } : {}),
    'staged.get': async (input) => staging.get(input.id),
    'staged.confirm': async (input) => staging.confirm(input.id, person()),
    'staged.discard': async (input) => staging.discard(input.id, person()),
    'audit.query': async (input) => deps.audit.query(input),
    'stats.get': async () => deps.stats.snapshot(),
    'tools.list': async () => registry.info(settings.get()),
    'plugins.list': async () => registry.plugins(),
  };

  return (async (action, input) => {
    const handler = handlers[action] as (i: unknown) => Promise<unknown>;
    if (!handler) return { ok: false, code: 'not_found', message: `unknown action '${String(action)}'` };
    try {
      return { ok: true, data: await handler(input) };
    } catch (e) {
      return { ok: false, ...toErrorShape(e) };
    }
  }) as ApiDispatch;
}

/** A token may be narrowed, never widened: every named tool must be one the user could call. */
function checkScope(scope: { tools?: string[]; plugins?: string[] } | undefined, role: Parameters<typeof capabilitiesOf>[0], registry: Registry): void {
  if (!scope) return;
  const caps = capabilitiesOf(role);
  for (const name of scope.tools ?? []) {
    const tool = registry.get(name);
    if (!tool) throw new GatehouseError('invalid_value', `--tools names an unknown tool '${name}' (see the tools list in the console or discover_tools)`);
    if (!caps.has(tool.capability)) throw new GatehouseError('invalid_value', `the ${role} role cannot use '${name}' (it needs ${tool.capability}); a token cannot be wider than its user`);
  }
  const plugins = new Set(registry.listPlugins().map((p) => p.id));
  for (const p of scope.plugins ?? []) if (!plugins.has(p)) throw new GatehouseError('invalid_value', `--plugins names an unknown plugin '${p}' (known: ${[...plugins].join(', ')})`);
}
