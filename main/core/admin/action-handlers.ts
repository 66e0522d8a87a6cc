import type { Principal } from '../../contract/principal.ts';
import type { Download } from '../../contract/api.ts';
import type { ActionDeps, Handlers, InvokeMeta } from './action-types.ts';
import type { Registry } from '../calls/registry.ts';
import { capabilitiesOf } from '../identity/users.ts';
import { GatehouseError, toErrorShape } from '../errors.ts';
import { createProHandlers } from './pro-handlers.ts';
import { createCloudHandlers } from './cloud-handlers.ts';
import { createUpstreamHandlers } from './upstream-handlers.ts';
import { createClientHandlers } from './client-handlers.ts';
import { createProfileHandlers, withToolCounts } from './profile-handlers.ts';
import { createApprovalLinkHandlers } from './approval-link-handlers.ts';
import { createPolicyHandlers } from './policy-handlers.ts';
import { deskEvent, deskView } from '../staging/staged-standing.ts';

/**
 * What each action does, once. Reached only through `invoke` (invoke.ts),
 * which has already checked the caller and parsed the input by then.
 */
export function createHandlers(deps: ActionDeps): Handlers {
  const { users, tokens, staging, registry, settings } = deps;
  const person = (p: Principal, meta: InvokeMeta) => {
    // invoke lets only people reach these actions; this keeps the type honest.
    if (p.kind !== 'person') throw new GatehouseError('forbidden', 'only a person decides staged writes here');
    return { kind: 'person' as const, principal: p, request_id: meta.request_id ?? null };
  };
  const desk = async (item: Parameters<typeof deskView>[0]) => deskView(item, await staging.blockNow(item));

  return {
    // Its warnings name a stdio upstream the sandbox cannot confine: known once the machine was asked.
    'health.get': async () => {
      await deps.upstreams?.settled();
      return deps.health();
    },
    'settings.get': async () => settings.get(),
    'settings.update': async (input) => settings.update(input),
    'tokens.list': async () => withToolCounts(tokens.list(), deps),
    'tokens.create': async (input) => {
      // Least privilege: without a named user, the default `agent` (an editor), never the administrator.
      const user = input.user ? users.require(input.user) : await users.defaultTokenUser();
      checkScope(input.scope, user.role, registry);
      const created = await tokens.create(input.label, user, input.scope ?? {});
      if (input.keychain_account) {
        try {
          await deps.clientVault.save(input.keychain_account, created.token);
        } catch (e) {
          await tokens.revoke(created.record.id);
          throw new GatehouseError(
            'vault_unavailable',
            `could not save the token to the ${deps.clientVault.backend}: ${toErrorShape(e).message}; no token was created`,
          );
        }
      }
      return { ...created, ...(input.keychain_account ? { keychain_account: input.keychain_account } : {}) };
    },
    'tokens.revoke': async (input, p, meta) => {
      await tokens.revoke(input.id);
      // Its pending writes are discarded, decided by the person who revoked it (at the next start if a crash comes between).
      await staging.discardRevoked(person(p, meta));
      return { id: input.id };
    },
    'users.list': async () => users.list(),
    'users.add': async (input) => users.add(input.login, input.role, input.display_name),
    'users.setRole': async (input) => users.setRole(input.login, input.role),
    'staged.list': async (input) => Promise.all(staging.list(input.status ? { status: input.status } : {}).map(desk)),
    'staged.get': async (input) => desk(staging.get(input.id)),
    'staged.confirm': async (input, p, meta) =>
      desk(await staging.confirm(input.id, { ...person(p, meta), preview_hash: input.preview_hash ?? null })),
    'staged.discard': async (input, p, meta) => desk(await staging.discard(input.id, person(p, meta))),
    'staged.settle': async (input, p, meta) => desk(await staging.settle(input.id, input.outcome, person(p, meta))),
    'audit.query': async (input) => deps.audit.query(input),
    'audit.export': async ({ format, ...filters }): Promise<Download> => ({
      filename: `gatehouse-audit-${new Date(deps.clock.now()).toISOString().slice(0, 19).replace(/[:T]/g, '-')}.${format}`,
      content_type: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
      write: (out) => deps.audit.export(filters, format, out),
    }),
    'stats.get': async () => deps.stats.snapshot(),
    'tools.list': async () => registry.info(settings.get()),
    'plugins.list': async () => registry.plugins(),
    'events.subscribe': async () => ({
      subscribe: (listener) => deps.events.subscribe((e) => listener(deskEvent(e, (x) => staging.blockOf(x)))),
    }),
    'console.loginLink': async () => {
      const base = deps.consoleUrl();
      if (!base)
        throw new GatehouseError(
          'service_unavailable',
          'no service is running: start one with `gatehouse serve`; it prints a login link',
        );
      return { url: `${base}login?code=${deps.sessions.issueLoginCode()}` };
    },
    'console.logout': async (_input, p) => ({
      ended: p.kind === 'person' && p.session !== null ? deps.sessions.end(p.session) : false,
    }),
    ...createProHandlers(deps),
    ...createCloudHandlers(deps),
    ...createUpstreamHandlers(deps),
    // Its pending writes go first, so a crash between leaves the upstream with none rather than writes for an
    // id that a later add gives to another program; a write staged meanwhile is discarded after.
    'upstreams.remove': async (input, p, meta) => {
      if (!deps.upstreams)
        throw new GatehouseError('service_unavailable', 'upstream servers are not managed in this process');
      await deps.upstreams.get(input.id);
      await staging.discardOfPlugin(input.id, 'upstream_removed', person(p, meta));
      const removed = await deps.upstreams.remove(input.id);
      await staging.discardOfPlugin(input.id, 'upstream_removed', person(p, meta));
      return removed;
    },
    ...createClientHandlers(deps),
    ...createProfileHandlers(deps),
    ...createApprovalLinkHandlers(deps, person),
    ...createPolicyHandlers(deps),
  };
}

/** A token may be narrowed, never widened: every named tool must be one the user could call. */
function checkScope(
  scope: { tools?: string[]; plugins?: string[] } | undefined,
  role: Parameters<typeof capabilitiesOf>[0],
  registry: Registry,
): void {
  if (!scope) return;
  const caps = capabilitiesOf(role);
  for (const name of scope.tools ?? []) {
    const tool = registry.get(name);
    if (!tool)
      throw new GatehouseError(
        'invalid_value',
        `--tools names an unknown tool '${name}' (see the tools list in the console or discover_tools)`,
      );
    if (!caps.has(tool.capability))
      throw new GatehouseError(
        'invalid_value',
        `the ${role} role cannot use '${name}' (it needs ${tool.capability}); a token cannot be wider than its user`,
      );
  }
  const plugins = new Set(registry.listPlugins().map((p) => p.id));
  for (const p of scope.plugins ?? [])
    if (!plugins.has(p))
      throw new GatehouseError(
        'invalid_value',
        `--plugins names an unknown plugin '${p}' (known: ${[...plugins].join(', ')})`,
      );
}
