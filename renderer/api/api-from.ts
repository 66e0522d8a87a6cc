import { RPC_ACTIONS } from '../../main/contract/index.ts';
import type { Api, ApiAction, Result } from '../../main/contract/index.ts';

export type ActionCall = (action: ApiAction, input: unknown) => Promise<Result<unknown>>;

/** An Api whose every JSON action in API_ACTIONS goes through `call`; the one place the per-action typing is cast away. */
export function apiFrom(call: ActionCall, subscribe: Api['subscribe']): Api {
  const api: Record<string, unknown> = { subscribe };
  for (const action of RPC_ACTIONS) api[action] = (input: unknown) => call(action, input);
  return api as Api;
}

/** The same Api seen as one untyped `call` (for wrappers that treat every action alike). */
export const callOf =
  (api: Api): ActionCall =>
  (action, input) =>
    (api[action] as unknown as (input: unknown) => Promise<Result<unknown>>)(input);
