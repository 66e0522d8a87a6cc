import type { Api } from '../../main/contract/index.ts';
import { apiFrom, callOf } from '../api/api-from.ts';

/**
 * The same Api, noticing when the service stops accepting us (the browser
 * session cookie expired or was never set), so the console can say how to
 * sign in again instead of showing an error on every card.
 */
export function watchSession(api: Api, onUnauthorized: () => void): Api {
  const call = callOf(api);
  return apiFrom(async (action, input) => {
    const result = await call(action, input);
    if (!result.ok && result.code === 'unauthorized') onUnauthorized();
    return result;
  }, api.subscribe);
}
