import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RPC_ACTIONS } from '../../main/contract/index.ts';

vi.mock('electron', () => import('./electron-mock.ts'));
const electron = await import('./electron-mock.ts');

electron.resetElectron();
await import('../../main/app/preload.ts');
const exposed = [...electron.contextBridge.exposed.keys()];
const bridge = electron.contextBridge.exposed.get('gatehouse') as Record<string, unknown>;

beforeEach(() => {
  electron.ipcRenderer.invoke.mockClear();
  electron.ipcRenderer.removeAllListeners();
});

describe('preload', () => {
  it('exposes one function per JSON action plus subscribe and exportAuditFile, and nothing else', async () => {
    expect(exposed).toEqual(['gatehouse']);
    expect(Object.keys(bridge).sort()).toEqual([...RPC_ACTIONS, 'subscribe', 'exportAuditFile'].sort());
    for (const value of Object.values(bridge)) {
      expect(typeof value).toBe('function');
      expect(value).not.toBe(electron.ipcRenderer);
      expect(value).not.toBe(electron.ipcRenderer.invoke);
    }
  });

  it('sends each action on its own channel', async () => {
    await (bridge['staged.confirm'] as (i: unknown) => Promise<unknown>)({ id: 'stg_1' });
    expect(electron.ipcRenderer.invoke).toHaveBeenCalledWith('gatehouse:staged.confirm', { id: 'stg_1' });
  });

  it('asks the main process for the audit export into a file on its own channel', async () => {
    await (bridge.exportAuditFile as (i: unknown) => Promise<unknown>)({ format: 'csv' });
    expect(electron.ipcRenderer.invoke).toHaveBeenCalledWith('gatehouse:audit.export-file', { format: 'csv' });
  });

  it('hands listeners the event payload only, and unsubscribes', async () => {
    const got: unknown[] = [];
    const off = (bridge.subscribe as (l: (e: unknown) => void) => () => void)((...args) => got.push(args));
    electron.ipcRenderer.emit('gatehouse:event', { sender: electron.ipcRenderer }, { type: 'health' });
    expect(got).toEqual([[{ type: 'health' }]]);
    off();
    electron.ipcRenderer.emit('gatehouse:event', {}, { type: 'health' });
    expect(got).toHaveLength(1);
    expect(electron.ipcRenderer.listenerCount('gatehouse:event')).toBe(0);
  });
});
