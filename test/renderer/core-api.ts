import { PRINCIPALS, type Api } from '../../main/contract/index.ts';
import { dispatchAs } from '../../main/core/admin/invoke.ts';
import { apiFrom } from '../../renderer/api/api-from.ts';
import type { Core } from '../helpers/core.ts';

/**
 * The console's Api on the real core (test/helpers/core.ts, in-memory
 * stores): every call goes through invoke as the app window would make it,
 * answers are structured-cloned as IPC does, and events come from the core.
 */
export function coreApi(core: Core): Api {
  const call = dispatchAs(core.invoke, PRINCIPALS.appConsole) as unknown as (
    action: string,
    input: unknown,
  ) => Promise<unknown>;
  return apiFrom(
    async (action, input) => structuredClone(await call(action, input)) as never,
    (listener) => core.events.subscribe((e) => listener(structuredClone(e))),
  );
}
