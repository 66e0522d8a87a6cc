import { API_ACTIONS } from '../../main/contract/index.ts';
import type { Api, ApiAction, Result } from '../../main/contract/index.ts';

/**
 * The same Api, noticing when the service stops accepting us (the browser
 * session cookie expired or was never set), so the console can say how to
 * sign in again instead of showing an error on every card.
 */
export function watchSession(api: Api, onUnauthorized: () => void): Api {
  const wrapped: Record<string, unknown> = { subscribe: api.subscribe };
  for (const action of Object.keys(API_ACTIONS) as ApiAction[]) {
    const method = api[action] as unknown as (input: unknown) => Promise<Result<unknown>>;
    wrapped[action] = async (input: unknown) => {
      const result = await method(input);
      if (!result.ok && result.code === 'unauthorized') onUnauthorized();
      return result;
    };
  }
  return wrapped as Api;
}
