import type { AnyAction, Who } from '../../contract/api.ts';
import type { Principal } from '../../contract/principal.ts';
import type { Settings } from '../../contract/settings.ts';
import type { StagedPayload } from '../../contract/staged.ts';
import type { Tokens } from './tokens.ts';
import type { Users } from './users.ts';
import type { Registry } from '../calls/registry.ts';
import type { CallContext } from '../calls/tool.ts';
import { viewerOf } from '../calls/registry.ts';
import { capabilitiesOf } from './users.ts';
import { GatehouseError } from '../errors.ts';

const SURFACE_NAMES = { console: 'the console', tray: 'the tray', cli: 'the CLI (with the admin key)' } as const;
const PEOPLE_ONLY =
  'needs a person: the console, the tray, or the CLI with the admin key. MCP client tokens are for the MCP endpoint only';

/**
 * May this principal call this action? Throws `forbidden` (or `unauthorized`
 * for a token revoked since it was checked) with the reason; returns when it may.
 * A client token passes only where the action names a capability (read-only
 * local REST) and only when the token is not narrowed to some tools or
 * plugins and its user has that capability now.
 */
export function checkCaller(
  action: AnyAction,
  who: Who,
  principal: Principal,
  state: { tokens: Pick<Tokens, 'list'>; users: Pick<Users, 'byId'> },
): void {
  switch (principal.kind) {
    case 'person':
      if (who.people.includes(principal.surface)) return;
      throw new GatehouseError(
        'forbidden',
        `${action} is only for ${who.people.map((s) => SURFACE_NAMES[s]).join(' or ') || 'nobody'}`,
      );
    case 'token': {
      if (!who.token) throw new GatehouseError('forbidden', `${action} ${PEOPLE_ONLY}`);
      const record = state.tokens.list().find((t) => t.id === principal.token_id);
      const user = record ? state.users.byId(record.user_id) : undefined;
      if (!record || !user) throw new GatehouseError('unauthorized', 'token unknown or revoked');
      if (record.scope.tools || record.scope.plugins || record.scope.profile !== undefined)
        throw new GatehouseError(
          'forbidden',
          `${action}: this token is narrowed to some tools, plugins or a profile; the local REST needs an un-narrowed token (or a person)`,
        );
      if (!capabilitiesOf(user.role).has(who.token))
        throw new GatehouseError('forbidden', `${action} needs a token whose user has ${who.token}`);
      return;
    }
    default:
      throw new GatehouseError('forbidden', `${action} ${PEOPLE_ONLY}`);
  }
}

/**
 * In `agent` approval mode an agent may decide its own user's staged writes
 * through the MCP tools, and only those of tools its token may call now: a
 * write staged before its tool was disabled, before the user lost the role
 * it needs, or by a wider token of the same user, is left to a person. In
 * `admin` mode no agent decides anything. Checked at decision time, whatever
 * the MCP layer showed the agent before.
 */
export function checkAgentDecision(
  item: StagedPayload,
  ctx: CallContext,
  settings: Settings,
  registry: Registry,
  verb: 'confirm' | 'discard',
): void {
  // Another user's write does not exist for this agent, whatever the mode.
  if (item.user_id !== ctx.user.id) throw new GatehouseError('staged_not_found', `no staged write '${item.id}'`);
  if (settings.approval_mode !== 'agent') {
    throw new GatehouseError(
      'forbidden',
      `approval_mode is '${settings.approval_mode}': only a person may ${verb} staged writes (in the console, the tray or the CLI)`,
    );
  }
  const tool = registry.get(item.tool);
  if (!tool || !registry.isVisible(tool, viewerOf(ctx), settings)) {
    throw new GatehouseError(
      'forbidden',
      `this token may not call '${item.tool}' now (the tool is disabled, outside the token's scope, or beyond its user's role), so it cannot ${verb} this write; a person can, in Gatehouse`,
    );
  }
}
