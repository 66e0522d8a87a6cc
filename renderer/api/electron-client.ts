import { ApiEvent } from '../../main/contract/index.ts';
import type { Api } from '../../main/contract/index.ts';
import type { DesktopApi } from '../../main/contract/api.ts';
import { apiFrom, callOf } from './api-from.ts';
import { createEventHub } from './event-hub.ts';

declare global {
  interface Window {
    /** Set by main/app/preload.ts through contextBridge: one method per action, subscribe and exportAuditFile. */
    gatehouse?: DesktopApi;
  }
}

/**
 * Electron mode: every action goes through the preload's method of the same
 * name (IPC to the main process, which checks the sender and the input).
 * The renderer itself never touches the network. A rejected invoke (main
 * process gone, handler missing) becomes service_unavailable, and events are
 * checked against the contract before a screen sees them.
 */
export function createElectronApi(bridge: Api): Api {
  const call = callOf(bridge);
  const hub = createEventHub(
    () => (emit) =>
      bridge.subscribe((raw) => {
        const parsed = ApiEvent.safeParse(raw);
        if (parsed.success) emit(parsed.data);
      }),
  );
  return apiFrom(async (action, input) => {
    try {
      const result = await call(action, input);
      if (result && typeof result === 'object' && typeof result.ok === 'boolean') return result;
      return { ok: false, code: 'internal_error', message: `The app answered ${action} with something unexpected.` };
    } catch {
      return {
        ok: false,
        code: 'service_unavailable',
        message: 'The Gatehouse service inside the app is not answering.',
      };
    }
  }, hub.subscribe);
}
