import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import { RPC_ACTIONS, ipcChannel } from '../contract/api.ts';
import type { RawDispatch } from '../contract/api.ts';
import type { Result } from '../contract/errors.ts';
import { isAppUrl } from './app-url.ts';

export interface IpcDeps {
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>;
  /** the core's invoke as the console in the app's window (PRINCIPALS.appConsole): it checks the input */
  dispatch: RawDispatch;
  /** whether a WebContents belongs to a window the app created */
  owns: (contents: WebContents) => boolean;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/**
 * A message is ours when it comes from the top frame of a window we created,
 * showing our console (app://console/). Anything else (a frame that
 * navigated away, an iframe, a devtools extension page, a window someone
 * else opened) is dropped.
 */
export function isTrustedSender(
  event: Pick<IpcMainInvokeEvent, 'sender' | 'senderFrame'>,
  owns: (c: WebContents) => boolean,
): boolean {
  const frame = event.senderFrame;
  if (!frame || frame.parent !== null) return false;
  if (!owns(event.sender)) return false;
  return isAppUrl(frame.url);
}

/**
 * The one guarded registrar: every JSON action in API_ACTIONS gets a handler
 * that checks the sender, then hands the raw input to the core's invoke,
 * which checks who may call it and the input against the action's schema,
 * exactly as for the admin API and the CLI. Nothing is registered per action
 * by hand. Returns a function that removes the handlers.
 */
export function registerIpc(deps: IpcDeps): () => void {
  const actions = RPC_ACTIONS;
  for (const action of actions) {
    deps.ipcMain.handle(ipcChannel(action), async (event, raw: unknown): Promise<Result<unknown>> => {
      if (!isTrustedSender(event, deps.owns)) {
        deps.log?.('ipc: refused a message from an unknown sender', { action, url: event.senderFrame?.url ?? null });
        return { ok: false, code: 'forbidden', message: 'this window may not call Gatehouse' };
      }
      try {
        return await deps.dispatch(action, raw);
      } catch (error) {
        deps.log?.('ipc: the core threw', { action, error: error instanceof Error ? error.message : String(error) });
        return { ok: false, code: 'internal_error', message: 'internal error: see the service log' };
      }
    });
  }
  return () => {
    for (const action of actions) deps.ipcMain.removeHandler(ipcChannel(action));
  };
}
