import { beforeEach, describe, expect, it, vi } from 'vitest';
import { PRINCIPALS, RPC_ACTIONS, SETTINGS_DEFAULTS, ipcChannel } from '../../main/contract/index.ts';
import type { RawDispatch } from '../../main/contract/index.ts';
import { dispatchAs } from '../../main/core/admin/invoke.ts';
import { openCore } from '../helpers/core.ts';

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
}) as unknown as RawDispatch;

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
  it('registers one handler per JSON action, derived from API_ACTIONS', () => {
    expect([...electron.ipcMain.handlers.keys()].sort()).toEqual(RPC_ACTIONS.map((a) => ipcChannel(a)).sort());
    unregister();
    expect(electron.ipcMain.handlers.size).toBe(0);
  });

  it('passes a call from our window to the core as it came: the core checks it', async () => {
    expect(await electron.ipcMain.invoke('gatehouse:settings.get', ours(), {})).toEqual({
      ok: true,
      data: SETTINGS_DEFAULTS,
    });
    await electron.ipcMain.invoke('gatehouse:audit.query', ours(), { tool: 'pages_get' });
    expect(calls).toEqual([
      { action: 'settings.get', input: {} },
      { action: 'audit.query', input: { tool: 'pages_get' } },
    ]);
  });

  it('refuses a sender it did not create', async () => {
    const stranger = new electron.FakeWebContents();
    stranger.mainFrame.url = 'app://console/index.html';
    const r = await electron.ipcMain.invoke(
      'gatehouse:tokens.create',
      { sender: stranger, senderFrame: stranger.mainFrame },
      { label: 'x' },
    );
    expect(r).toMatchObject({ ok: false, code: 'forbidden' });
    expect(calls).toEqual([]);
  });

  it('refuses our window once it shows anything but the console, a subframe, or a frame that is gone', async () => {
    const event = ours();
    event.senderFrame.url = 'https://evil.example/';
    expect(await electron.ipcMain.invoke('gatehouse:staged.confirm', event, { id: 'x' })).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
    event.senderFrame.url = 'app://console/index.html';
    const child = new electron.FakeWebFrame('app://console/index.html');
    child.parent = event.senderFrame;
    expect(
      await electron.ipcMain.invoke('gatehouse:staged.confirm', { ...event, senderFrame: child }, { id: 'x' }),
    ).toMatchObject({ ok: false, code: 'forbidden' });
    expect(
      await electron.ipcMain.invoke('gatehouse:staged.confirm', { ...event, senderFrame: null }, { id: 'x' }),
    ).toMatchObject({ ok: false, code: 'forbidden' });
    expect(calls).toEqual([]);
    expect(await electron.ipcMain.invoke('gatehouse:staged.confirm', event, { id: 'x' })).toMatchObject({ ok: true });
  });

  it("answers input that does not match the action's schema as the core does (invalid_value), nothing applied", async () => {
    unregister();
    const core = await openCore();
    unregister = registerIpc({
      ipcMain: electron.ipcMain as never,
      dispatch: dispatchAs(core.invoke, PRINCIPALS.appConsole),
      owns: (c) => windows.owns(c),
    });
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
      expect(r, channel).toMatchObject({
        ok: false,
        code: 'invalid_value',
        message: expect.stringMatching(new RegExp(`^${channel.slice('gatehouse:'.length).replace('.', '\\.')}: `)),
      });
    }
    expect(core.settings.get()).toEqual(SETTINGS_DEFAULTS);
    expect(core.tokens.list()).toEqual([]);
  });

  it('turns a crash in the core into internal_error without its message', async () => {
    const r = (await electron.ipcMain.invoke('gatehouse:stats.get', ours(), {})) as { message: string };
    expect(r).toMatchObject({ ok: false, code: 'internal_error' });
    expect(r.message).not.toContain('/home/me');
  });
});
