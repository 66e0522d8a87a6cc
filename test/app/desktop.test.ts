import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RPC_ACTIONS, ROLE_CAPABILITIES } from '../../main/contract/index.ts';
import { AUDIT_EXPORT_FILE_CHANNEL } from '../../main/contract/api.ts';
import type { ServiceConfig } from '../../main/service.ts';

vi.mock('electron', () => import('./electron-mock.ts'));
const electron = await import('./electron-mock.ts');
const { runDesktop } = await import('../../main/app/desktop.ts');
const { startService } = await import('../../main/service.ts');
const { silentLogger } = await import('../../main/lib/logger.ts');

let dir: string;
let started: Awaited<ReturnType<typeof startService>> | null;
let stopped: boolean;
const savedDataDir = process.env.GATEHOUSE_DATA_DIR;

/** The real service, on a free port with the file vault, remembered so the test can act as an MCP client would. */
async function start(config: ServiceConfig) {
  started = await startService({ ...config, port: 0, vault: 'file', log: silentLogger, writeRuntimeFile: false });
  const svc = started;
  return { ...svc, stop: async () => ((stopped = true), svc.stop()) };
}

beforeEach(async () => {
  electron.resetElectron();
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-desktop-'));
  process.env.GATEHOUSE_DATA_DIR = dir;
  started = null;
  stopped = false;
});
afterEach(async () => {
  if (started && !stopped) await started.stop();
  if (savedDataDir === undefined) delete process.env.GATEHOUSE_DATA_DIR;
  else process.env.GATEHOUSE_DATA_DIR = savedDataDir;
  await rm(dir, { recursive: true, force: true });
});

describe('desktop shell wiring', () => {
  it('starts the core in-process and wires window, IPC, tray and notifications to it', async () => {
    await runDesktop(start);
    expect(started?.dataDir).toBe(dir);
    // the console window, with the secure options, on app://
    const win = electron.BrowserWindow.created[0]!;
    expect(win.options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      preload: join('/app', 'dist', 'main', 'app', 'preload.cjs'),
    });
    expect(win.loaded).toEqual(['app://console/index.html']);
    expect(electron.protocol.handlers.has('app')).toBe(true);
    // one IPC handler per action, answering from the real core
    // one per JSON action, and the audit export into a file
    expect(electron.ipcMain.handlers.size).toBe(RPC_ACTIONS.length + 1);
    expect(electron.ipcMain.handlers.has(AUDIT_EXPORT_FILE_CHANNEL)).toBe(true);
    const ours = { sender: win.webContents, senderFrame: win.webContents.mainFrame };
    const health = (await electron.ipcMain.invoke('gatehouse:health.get', ours, {})) as {
      ok: boolean;
      data: { data_dir: string };
    };
    expect(health.ok && health.data.data_dir).toBe(dir);
    const tray = electron.Tray.created[0]!;
    expect(tray.tooltip).toBe('Gatehouse: off');

    // an agent stages a write: the page hears of it, a notification shows, the tray counts it
    const gw = started!.core;
    const admin = gw.users.list().find((u) => u.role === 'administrator')!;
    await gw.pipeline.call(
      'pages_update',
      { id: 1, title: 'From the desktop test' },
      {
        user: admin,
        capabilities: new Set(ROLE_CAPABILITIES.administrator),
        token: null,
        request_id: 'r1',
        client: 'test',
      },
    );
    await vi.waitFor(() => expect(tray.tooltip).toBe('Gatehouse: off · 1 pending approval'));
    expect(
      win.webContents.sent.some(
        (m) => m.channel === 'gatehouse:event' && (m.payload as { type: string }).type === 'staged',
      ),
    ).toBe(true);
    expect(electron.Notification.shown.map((n) => n.options.title)).toEqual(['Approval needed: pages_update']);
    electron.Notification.shown[0]!.emit('click');
    // the console opens on that write
    const id = gw.staging.list({ status: 'pending' })[0]!.id;
    expect(win.loaded.at(-1)).toBe(`app://console/index.html#approvals/${id}`);

    // quitting stops the service before the app goes
    electron.app.emit('before-quit');
    let prevented = false;
    electron.app.emit('will-quit', { preventDefault: () => (prevented = true) });
    expect(prevented).toBe(true);
    // the service's stop runs first: a loaded machine takes more than waitFor's default second
    await vi.waitFor(() => expect(electron.app.quitCalls).toBe(1), { timeout: 15_000 });
    expect(stopped).toBe(true);
    expect(tray.destroyed).toBe(true);
    expect(win.userClose()).toBe(true);
  });

  it('a second instance hands over to the first and quits', async () => {
    electron.app.singleInstance = false;
    const startService = vi.fn();
    await runDesktop(startService);
    expect(startService).not.toHaveBeenCalled();
    expect(electron.app.quitCalls).toBe(1);
    expect(electron.BrowserWindow.created).toHaveLength(0);
  });

  it('shows a service that cannot start in the tray and tells the person', async () => {
    await runDesktop(async () => {
      throw new Error('port 7823 on 127.0.0.1 is in use');
    });
    expect(electron.Tray.created[0]!.tooltip).toBe('Gatehouse: the service is not running');
    expect(electron.Notification.shown.map((n) => n.options.body)).toEqual(['port 7823 on 127.0.0.1 is in use']);
    expect(electron.ipcMain.handlers.size).toBe(0);
  });
});
