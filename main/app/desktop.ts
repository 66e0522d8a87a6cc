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
  const windows = consoleWindows(root, platform);
  watchApp(windows);

  await app.whenReady();
  hardenSession(session.defaultSession);
  serveApp(protocol, join(root, 'dist-renderer'));

  const state: DesktopState = { service: null, quitting: false, updates: null };
  const desk = await openTray(state, windows, root, platform);
  stopOnQuit(state, windows, desk.tray);

  try {
    state.service = await startService({
      dataDir: resolveDataDir(undefined, platform, process.env, homedir()),
      host: '127.0.0.1',
      consoleDir: join(root, 'dist-renderer'),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    desk.keeper.failed(message);
    showProblem('Gatehouse could not start', message);
    return;
  }
  await connectService(state.service, state, windows, desk, platform);
  if (!startedHidden(process.argv, app, platform)) windows.show();
}

/** What the shell's parts share: the running service (none before it started and once quitting) and its updates. */
interface DesktopState {
  service: DesktopService | null;
  quitting: boolean;
  updates: ReturnType<typeof startAppUpdates>;
}

interface Desk {
  tray: TrayController;
  keeper: TrayStateKeeper;
  trayActions: ReturnType<typeof createTrayActions>;
}

function consoleWindows(root: string, platform: NodeJS.Platform): ConsoleWindows {
  return new ConsoleWindows({
    preload: join(root, 'dist', 'main', 'app', 'preload.cjs'),
    icon: join(root, 'assets', 'icon-512.png'),
    // A tray app shows its Dock icon only while its window is open.
    onVisibility: (visible) => {
      if (platform !== 'darwin') return;
      if (visible) void app.dock?.show();
      else app.dock?.hide();
    },
  });
}

function watchApp(windows: ConsoleWindows): void {
  app.on('second-instance', () => windows.show());
  // macOS: clicking the Dock icon reopens the console.
  app.on('activate', () => windows.show());
  // Closing the window leaves the app running in the tray.
  app.on('window-all-closed', () => {});
  app.on('web-contents-created', (_event, contents) => guardContents(contents));
}

/** Where the login item is written and what it starts (the AppImage, when run as one). */
function loginItemOptions(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): LoginItemOptions {
  return {
    platform,
    autostartDir: join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'autostart'),
    execPath: env.APPIMAGE ?? process.execPath,
  };
}

/** The tray, its actions and its state, shown before the service starts (its failure is shown there too). */
async function openTray(
  state: DesktopState,
  windows: ConsoleWindows,
  root: string,
  platform: NodeJS.Platform,
): Promise<Desk> {
  const login = loginItemOptions(platform, process.env);
  const trayActions = createTrayActions({
    dispatch: () => (state.service ? dispatchAs(state.service.invoke, PRINCIPALS.tray) : null),
    openConsole: (screen, focus) => windows.show(screen, focus),
    setOpenAtLogin: async (enabled) => {
      await setOpenAtLogin(app, enabled, login);
      keeper.set({ openAtLogin: await getOpenAtLogin(app, login) });
    },
    installUpdate: async () =>
      state.updates ? state.updates.updater.install(openInstaller) : { ok: false, reason: 'updates are not available' },
    quit: () => app.quit(),
    refresh: () => void keeper.refresh(),
    report: showProblem,
  });
  const tray = new TrayController({ iconDir: join(root, 'assets'), platform, actions: trayActions });
  const notifyQuota = createQuotaNotifier({ openUsage: () => windows.show('usage') });
  const notifyUpdate = createUpdateNotifier({ openCloud: () => windows.show('cloud') });
  const keeper = new TrayStateKeeper((s) => {
    tray.update(s);
    if (s.phase === 'running') notifyQuota(s.cloud.quotas);
    notifyUpdate(s.update);
  });
  keeper.set({ openAtLogin: await getOpenAtLogin(app, login).catch(() => false) });
  return { tray, keeper, trayActions };
}

/** The verified installer is opened by the system for the person, who clicked Install. */
async function openInstaller(path: string): Promise<void> {
  const error = await shell.openPath(path);
  if (error) throw new Error(error);
}

function stopOnQuit(state: DesktopState, windows: ConsoleWindows, tray: TrayController): void {
  app.on('before-quit', () => windows.allowClose());
  app.on('will-quit', (event) => {
    if (!state.service || state.quitting) return;
    // Stop the service cleanly (close sockets, remove runtime.json), then really quit.
    event.preventDefault();
    state.quitting = true;
    const running = state.service;
    state.service = null;
    state.updates?.stop();
    void running.stop().finally(() => {
      tray.destroy();
      app.quit();
    });
  });
}

/** The started service reaches the window (IPC, its events), the notifications, the tray and the update checks. */
async function connectService(
  running: DesktopService,
  state: DesktopState,
  windows: ConsoleWindows,
  desk: Desk,
  platform: NodeJS.Platform,
): Promise<void> {
  registerWindowIpc(running, windows);
  // A notification's Approve / Discard (macOS buttons the person presses) decide as the tray does.
  const notify = createStagedNotifier({
    openApprovals: (id) => windows.show('approvals', id),
    approve: (id, hash) => desk.trayActions.approve(id, hash),
    discard: (id) => desk.trayActions.discard(id),
    platform,
  });
  running.events.subscribe((event) => {
    windows.send(IPC_EVENT_CHANNEL, event);
    notify(event);
    desk.keeper.onEvent(event);
  });
  await desk.keeper.connect(dispatchAs(running.invoke, PRINCIPALS.tray));
  if (running.core && running.dataDir) {
    state.updates = startAppUpdates({
      invoke: running.invoke,
      cloud: running.core.cloud,
      dataDir: running.dataDir,
      platform,
      arch: process.arch,
      onState: (s) => desk.keeper.set({ update: s.phase === 'ready' ? s.version : null }),
    });
  }
}

function registerWindowIpc(running: DesktopService, windows: ConsoleWindows): void {
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
}
