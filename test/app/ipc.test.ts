import { beforeEach, describe, expect, it, vi } from 'vitest';
import { API_ACTIONS, SETTINGS_DEFAULTS, ipcChannel } from '../../main/contract/index.ts';
import type { ApiDispatch } from '../../main/contract/index.ts';

vi.mock('electron', () => import('./electron-mock.ts'));
const electron = await import('./electron-mock.ts');
const { ConsoleWindows } = await import('../../main/app/window.ts');
const { registerIpc } = await import('../../main/app/ipc.ts');

let calls: { action: string; input: unknown }[];
let windows: InstanceType<typeof ConsoleWindows>;
let unregister: () => void;

const dispatch = (async (action: string, input: unknown) => {
  calls.push({ action, input });
  if (action === 'stats.get') throw new Error('secret path /home/me/.gatehouse exploded');
  if (action === 'settings.get') return { ok: true, data: SETTINGS_DEFAULTS };
  return { ok: true, data: { echoed: input } };
}) as unknown as ApiDispatch;

beforeEach(() => {
  electron.resetElectron();
  calls = [];
  windows = new ConsoleWindows({ preload: '/p.cjs' });
  unregister = registerIpc({ ipcMain: electron.ipcMain as never, dispatch, owns: (c) => windows.owns(c) });
});

/** An invoke from our console window's top frame. */
function ours() {
  windows.show();
  const win = electron.BrowserWindow.created[0]!;
  return { sender: win.webContents, senderFrame: win.webContents.mainFrame };
}

describe('guarded IPC registrar', () => {
  it('registers one handler per action, derived from API_ACTIONS', () => {
    expect([...electron.ipcMain.handlers.keys()].sort()).toEqual(Object.keys(API_ACTIONS).map((a) => ipcChannel(a as never)).sort());
    unregister();
    expect(electron.ipcMain.handlers.size).toBe(0);
  });

  it('passes a valid call from our window to the core, with the schema\'s defaults', async () => {
    expect(await electron.ipcMain.invoke('gatehouse:settings.get', ours(), {})).toEqual({ ok: true, data: SETTINGS_DEFAULTS });
    await electron.ipcMain.invoke('gatehouse:audit.query', ours(), { tool: 'pages_get' });
    expect(calls).toEqual([
      { action: 'settings.get', input: {} },
      { action: 'audit.query', input: { tool: 'pages_get', limit: 50 } },
    ]);
  });

  it('refuses a sender it did not create', async () => {
    const stranger = new electron.FakeWebContents();
    stranger.mainFrame.url = 'app://console/index.html';
    const r = await electron.ipcMain.invoke('gatehouse:tokens.create', { sender: stranger, senderFrame: stranger.mainFrame }, { label: 'x' });
    expect(r).toMatchObject({ ok: false, code: 'forbidden' });
    expect(calls).toEqual([]);
  });

  it('refuses our window once it shows anything but the console, a subframe, or a frame that is gone', async () => {
    const event = ours();
    event.senderFrame.url = 'https://evil.example/';
    expect(await electron.ipcMain.invoke('gatehouse:staged.confirm', event, { id: 'x' })).toMatchObject({ ok: false, code: 'forbidden' });
    event.senderFrame.url = 'app://console/index.html';
    const child = new electron.FakeWebFrame('app://console/index.html');
    child.parent = event.senderFrame;
    expect(await electron.ipcMain.invoke('gatehouse:staged.confirm', { ...event, senderFrame: child }, { id: 'x' })).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await electron.ipcMain.invoke('gatehouse:staged.confirm', { ...event, senderFrame: null }, { id: 'x' })).toMatchObject({ ok: false, code: 'forbidden' });
    expect(calls).toEqual([]);
    expect(await electron.ipcMain.invoke('gatehouse:staged.confirm', event, { id: 'x' })).toMatchObject({ ok: true });
  });

  it('refuses input that does not match the action\'s schema', async () => {
    const cases: [string, unknown][] = [
      ['gatehouse:staged.confirm', {}],
      ['gatehouse:staged.confirm', { id: 'x', extra: true }],
      ['gatehouse:settings.update', { rate_limit: -1 }],
      ['gatehouse:tokens.create', { label: '   ' }],
      ['gatehouse:audit.query', { limit: 100_000 }],
      ['gatehouse:health.get', 'not an object'],
    ];
    for (const [channel, input] of cases) {
      const r = await electron.ipcMain.invoke(channel, ours(), input);
      expect(r, channel).toMatchObject({ ok: false, code: 'invalid_params' });
    }
    expect(calls).toEqual([]);
  });

  it('turns a crash in the core into internal_error without its message', async () => {
    const r = (await electron.ipcMain.invoke('gatehouse:stats.get', ours(), {})) as { message: string };
    expect(r).toMatchObject({ ok: false, code: 'internal_error' });
    expect(r.message).not.toContain('/home/me');
  });
});
