import type { TokenView } from '../../contract/tokens.ts';
import type { ActionDeps, Handler } from './action-types.ts';
import { capabilitiesOf } from '../identity/users.ts';

/** The profile actions (main/contract/profiles.ts), people only (checked by invoke before any of these runs). */
export function createProfileHandlers(deps: Pick<ActionDeps, 'profiles'>): {
  'profiles.list': Handler<'profiles.list'>;
  'profiles.get': Handler<'profiles.get'>;
  'profiles.create': Handler<'profiles.create'>;
  'profiles.remove': Handler<'profiles.remove'>;
} {
  const { profiles } = deps;
  return {
    'profiles.list': async () => profiles.list(),
    'profiles.get': async (input) => profiles.show(input.name),
    'profiles.create': async (input) => profiles.create(input),
    'profiles.remove': async (input) => profiles.remove(input.name),
  };
}

/** Each token with how many tools it may see now: the same rule tools/list applies to it (the console's Tokens screen shows it). */
export function withToolCounts(
  tokens: TokenView[],
  deps: Pick<ActionDeps, 'users' | 'registry' | 'settings'>,
): TokenView[] {
  const settings = deps.settings.get();
  return tokens.map((t) => {
    const user = deps.users.byId(t.user_id);
    const tool_count = user
      ? deps.registry.visible({ capabilities: capabilitiesOf(user.role), scope: t.scope }, settings).length
      : 0;
    return { ...t, tool_count };
  });
}
