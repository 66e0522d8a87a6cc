import { contextBridge, ipcRenderer } from 'electron';
import type { IpcRendererEvent } from 'electron';
import { AUDIT_EXPORT_FILE_CHANNEL, IPC_EVENT_CHANNEL, RPC_ACTIONS, ipcChannel } from '../contract/api.ts';
import type { ApiEvent, DesktopApi } from '../contract/api.ts';

/**
 * What the console page gets as `window.gatehouse`: one function per action
 * (each invokes that action's own channel), `subscribe` for live updates, and
 * `exportAuditFile` (the main process writes the export where the person chooses).
 * ipcRenderer itself, and the IPC event objects (whose `sender` is
 * ipcRenderer), never cross into the page. Bundled to CommonJS by
 * `vite build --mode preload`, because sandboxed preloads cannot import.
 */
export function buildBridge(ipc: Pick<typeof ipcRenderer, 'invoke' | 'on' | 'removeListener'>): DesktopApi {
  const bridge: Record<string, unknown> = {};
  for (const action of RPC_ACTIONS) {
    const channel = ipcChannel(action);
    bridge[action] = (input: unknown) => ipc.invoke(channel, input);
  }
  bridge.subscribe = (listener: (event: ApiEvent) => void) => {
    if (typeof listener !== 'function') throw new TypeError('subscribe needs a function');
    const forward = (_event: IpcRendererEvent, payload: ApiEvent) => listener(payload);
    ipc.on(IPC_EVENT_CHANNEL, forward);
    return () => {
      ipc.removeListener(IPC_EVENT_CHANNEL, forward);
    };
  };
  bridge.exportAuditFile = (input: unknown) => ipc.invoke(AUDIT_EXPORT_FILE_CHANNEL, input);
  return bridge as DesktopApi;
}

contextBridge.exposeInMainWorld('gatehouse', buildBridge(ipcRenderer));
