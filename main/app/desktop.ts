import { homedir } from 'node:os';
import { join } from 'node:path';
import { app, dialog, ipcMain, protocol, session, shell } from 'electron';
import { IPC_EVENT_CHANNEL } from '../contract/api.ts';
import type { ApiEvent } from '../contract/api.ts';
import { PRINCIPALS } from '../contract/principal.ts';
import { dispatchAs, type Invoke } from '../core/admin/invoke.ts';
import { resolveDataDir } from '../contract/paths.ts';
import { serveApp } from './app-protocol.ts';
import { registerIpc } from './ipc.ts';
import { registerAuditExportFile } from './audit-export-file.ts';
import { getOpenAtLogin, setOpenAtLogin, startedHidden } from './login-item.ts';
import type { LoginItemOptions } from './login-item.ts';
import { createQuotaNotifier, createStagedNotifier, createUpdateNotifier, showProblem } from './notifications.ts';
import { startAppUpdates } from './app-updates.ts';
import type { PackageClient } from '../updates/release-source.ts';
import { hardenSession } from './security.ts';
import { TrayController } from './tray.ts';
import { TrayStateKeeper, createTrayActions } from './tray-state.ts';
import { ConsoleWindows, guardContents } from './window.ts';

/** The part of main/service.ts's running service the shell uses. */
export interface DesktopService {
  baseUrl: string;
  mcpUrl: string;
  consoleUrl: string;
  /** the core's one action path; the window and the tray each call it as their own principal */
  invoke: Invoke;
  events: { subscribe(listener: (event: ApiEvent) => void): () => void };
  stop(): Promise<void>;
  /** the data dir and the core's cloud client, for the update checks (absent: no updates) */
  dataDir?: string;
  core?: { cloud: PackageClient };
}

export interface DesktopServiceConfig {
  dataDir: string;
  host?: string;
  port?: number;
  enable?: boolean;
  /** the built console, also served over HTTP at {base_url}/console/ for a browser */
  consoleDir?: string;
}

export type StartDesktopService = (config: DesktopServiceConfig) => Promise<DesktopService>;

/**
 * The desktop shell: the core service in-process, a tray, one console
 * window, guarded IPC and notifications. Thin glue; each part lives in its
 * own file and is tested there. Call after registerAppScheme (before ready).
 */
export async function runDesktop(startService: StartDesktopService): Promise<void> {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  const platform = process.platform;
  const root = app.getAppPath();
  const windows = new ConsoleWindows({
    preload: join(root, 'dist', 'main', 'app', 'preload.cjs'),
    icon: join(root, 'assets', 'icon-512.png'),
    // A tray app shows its Dock icon only while its window is open.
    onVisibility: (visible) => {
      if (platform !== 'darwin') return;
      if (visible) void app.dock?.show();
      else app.dock?.hide();
    },
  });
  app.on('second-instance', () => windows.show());
  // macOS: clicking the Dock icon reopens the console.
  app.on('activate', () => windows.show());
  // Closing the window leaves the app running in the tray.
  app.on('window-all-closed', () => {});
  app.on('web-contents-created', (_event, contents) => guardContents(contents));

  await app.whenReady();
  hardenSession(session.defaultSession);
  serveApp(protocol, join(root, 'dist-renderer'));

  const login: LoginItemOptions = {
    platform,
    autostartDir: join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'autostart'),
    execPath: process.env.APPIMAGE ?? process.execPath,
  };
  let service: DesktopService | null = null;
  let quitting = false;
  const trayActions = createTrayActions({
    dispatch: () => (service ? dispatchAs(service.invoke, PRINCIPALS.tray) : null),
    openConsole: (screen, focus) => windows.show(screen, focus),
    setOpenAtLogin: async (enabled) => {
      await setOpenAtLogin(app, enabled, login);
      keeper.set({ openAtLogin: await getOpenAtLogin(app, login) });
    },
    installUpdate: async () =>
      updates ? updates.updater.install(openInstaller) : { ok: false, reason: 'updates are not available' },
    quit: () => app.quit(),
    refresh: () => void keeper.refresh(),
    report: showProblem,
  });
  const tray = new TrayController({ iconDir: join(root, 'assets'), platform, actions: trayActions });
  const notifyQuota = createQuotaNotifier({ openUsage: () => windows.show('usage') });
  const notifyUpdate = createUpdateNotifier({ openCloud: () => windows.show('cloud') });
  let updates: ReturnType<typeof startAppUpdates> = null;
  // the verified installer is opened by the system for the person, who clicked Install
  const openInstaller = async (path: string) => {
    const error = await shell.openPath(path);
    if (error) throw new Error(error);
  };
  const keeper = new TrayStateKeeper((state) => {
    tray.update(state);
    if (state.phase === 'running') notifyQuota(state.cloud.quotas);
    notifyUpdate(state.update);
  });
  keeper.set({ openAtLogin: await getOpenAtLogin(app, login).catch(() => false) });

  app.on('before-quit', () => windows.allowClose());
  app.on('will-quit', (event) => {
    if (!service || quitting) return;
    // Stop the service cleanly (close sockets, remove runtime.json), then really quit.
    event.preventDefault();
    quitting = true;
    const running = service;
    service = null;
    updates?.stop();
    void running.stop().finally(() => {
      tray.destroy();
      app.quit();
    });
  });

  try {
    service = await startService({
      dataDir: resolveDataDir(undefined, platform, process.env, homedir()),
      host: '127.0.0.1',
      consoleDir: join(root, 'dist-renderer'),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    keeper.failed(message);
    showProblem('Gatehouse could not start', message);
    return;
  }

  const running = service;
  registerIpc({
    ipcMain,
    dispatch: dispatchAs(running.invoke, PRINCIPALS.appConsole),
    owns: (contents) => windows.owns(contents),
    log: (m, f) => console.warn(m, f ?? {}),
  });
  registerAuditExportFile({
    ipcMain,
    invoke: running.invoke,
    owns: (contents) => windows.owns(contents),
    choosePath: async (name) => {
      const r = await dialog.showSaveDialog({ defaultPath: join(app.getPath('downloads'), name) });
      return r.canceled || !r.filePath ? null : r.filePath;
    },
    log: (m, f) => console.warn(m, f ?? {}),
  });
  // A notification's Approve / Discard (macOS buttons the person presses) decide as the tray does.
  const notify = createStagedNotifier({
    openApprovals: (id) => windows.show('approvals', id),
    approve: (id, hash) => trayActions.approve(id, hash),
    discard: (id) => trayActions.discard(id),
    platform,
  });
  running.events.subscribe((event) => {
    windows.send(IPC_EVENT_CHANNEL, event);
    notify(event);
    keeper.onEvent(event);
  });
  await keeper.connect(dispatchAs(running.invoke, PRINCIPALS.tray));
  if (running.core && running.dataDir) {
    updates = startAppUpdates({
      invoke: running.invoke,
      cloud: running.core.cloud,
      dataDir: running.dataDir,
      platform,
      arch: process.arch,
      onState: (s) => keeper.set({ update: s.phase === 'ready' ? s.version : null }),
    });
  }
  if (!startedHidden(process.argv, app, platform)) windows.show();
}
