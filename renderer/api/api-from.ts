import { RPC_ACTIONS } from '../../main/contract/index.ts';
import type { Api, ApiAction, ApiInput, ApiMethods, Result } from '../../main/contract/index.ts';

/** One way to run any action: the input is the action's own, the answer is checked by whoever reads it. */
export type ActionCall = <A extends ApiAction>(action: A, input: ApiInput<A>) => Promise<Result<unknown>>;

/** An Api whose every JSON action in API_ACTIONS goes through `call`; the one place the per-action typing is cast away. */
export function apiFrom(call: ActionCall, subscribe: Api['subscribe']): Api {
  const api: Record<string, unknown> = { subscribe };
  const method =
    <A extends ApiAction>(action: A) =>
    (input: ApiInput<A>) =>
      call(action, input);
  for (const action of RPC_ACTIONS) api[action] = method(action);
  return api as Api;
}

/** The same Api seen as one `call` (for wrappers that treat every action alike). */
export const callOf =
  (api: Api): ActionCall =>
  (action, input) => {
    // Looked up on ApiMethods (a mapped type), the method of a generic `action` takes that action's own input.
    const methods: ApiMethods = api;
    return methods[action](input);
  };
