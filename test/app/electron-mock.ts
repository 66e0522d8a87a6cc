/**
 * The `electron` module, replaced at the boundary for main/app tests (the
 * Electron binary cannot run here). Each test file says
 *   vi.mock('electron', () => import('./electron-mock.ts'));
 * and inspects what the shell asked Electron to do through these fakes.
 */
import { EventEmitter } from 'node:events';
import { vi } from 'vitest';

type Handler = (...args: unknown[]) => unknown;

let nextContentsId = 1;

export class FakeWebFrame {
  parent: FakeWebFrame | null = null;
  constructor(public url: string) {}
}

export class FakeWebContents extends EventEmitter {
  readonly id = nextContentsId++;
  destroyed = false;
  readonly sent: { channel: string; payload: unknown }[] = [];
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null;
  mainFrame = new FakeWebFrame('about:blank');
  isDestroyed() {
    return this.destroyed;
  }
  send(channel: string, payload: unknown) {
    this.sent.push({ channel, payload });
  }
  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }) {
    this.windowOpenHandler = handler;
  }
  /** Fire a navigation event the way Electron does; returns whether it was prevented. */
  navigate(event: 'will-navigate' | 'will-redirect' | 'will-frame-navigate', url: string): boolean {
    let prevented = false;
    this.emit(event, { url, preventDefault: () => (prevented = true) });
    return prevented;
  }
}

export class BrowserWindow extends EventEmitter {
  static created: BrowserWindow[] = [];
  readonly webContents = new FakeWebContents();
  readonly loaded: string[] = [];
  visible = false;
  destroyed = false;
  minimized = false;
  constructor(readonly options: Record<string, unknown>) {
    super();
    BrowserWindow.created.push(this);
  }
  static fromWebContents(contents: FakeWebContents) {
    return BrowserWindow.created.find((w) => w.webContents === contents) ?? null;
  }
  async loadURL(url: string) {
    this.loaded.push(url);
    this.webContents.mainFrame.url = url;
  }
  show() {
    this.visible = true;
  }
  hide() {
    this.visible = false;
  }
  focus() {}
  restore() {
    this.minimized = false;
  }
  isMinimized() {
    return this.minimized;
  }
  isDestroyed() {
    return this.destroyed;
  }
  /** What the user clicking the close button does; returns whether the window really closed. */
  userClose(): boolean {
    let prevented = false;
    this.emit('close', { preventDefault: () => (prevented = true) });
    if (!prevented) {
      this.destroyed = true;
      this.webContents.destroyed = true;
      this.emit('closed');
    }
    return !prevented;
  }
}

export const shell = { openExternal: vi.fn(async (_url: string) => {}), openPath: vi.fn(async (_path: string) => '') };

export const ipcMain = {
  handlers: new Map<string, Handler>(),
  handle(channel: string, handler: Handler) {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, handler);
  },
  removeHandler(channel: string) {
    this.handlers.delete(channel);
  },
  /** Call a handler as a renderer's invoke would. */
  async invoke(channel: string, event: unknown, input: unknown) {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`No handler registered for '${channel}'`);
    return handler(event, input);
  },
};

export const ipcRenderer = Object.assign(new EventEmitter(), {
  invoke: vi.fn(async (_channel: string, _input: unknown): Promise<unknown> => ({ ok: true, data: null })),
});

export const contextBridge = {
  exposed: new Map<string, unknown>(),
  exposeInMainWorld(key: string, api: unknown) {
    this.exposed.set(key, api);
  },
};

export class FakeImage {
  template = false;
  constructor(readonly path: string) {}
  setTemplateImage(on: boolean) {
    this.template = on;
  }
}
export const nativeImage = { createFromPath: (path: string) => new FakeImage(path) };

export class Tray extends EventEmitter {
  static created: Tray[] = [];
  image: FakeImage;
  tooltip = '';
  title = '';
  menu: { template: unknown[] } | null = null;
  destroyed = false;
  constructor(image: FakeImage) {
    super();
    this.image = image;
    Tray.created.push(this);
  }
  setImage(image: FakeImage) {
    this.image = image;
  }
  setToolTip(text: string) {
    this.tooltip = text;
  }
  setTitle(text: string) {
    this.title = text;
  }
  setContextMenu(menu: { template: unknown[] }) {
    this.menu = menu;
  }
  destroy() {
    this.destroyed = true;
  }
}

export const Menu = { buildFromTemplate: (template: unknown[]) => ({ template }) };

export class Notification extends EventEmitter {
  static supported = true;
  static shown: Notification[] = [];
  constructor(readonly options: { title: string; body: string; actions?: Array<{ type: 'button'; text: string }> }) {
    super();
  }
  static isSupported() {
    return Notification.supported;
  }
  show() {
    Notification.shown.push(this);
  }
}

export const app = Object.assign(new EventEmitter(), {
  badge: 0,
  singleInstance: true,
  quitCalls: 0,
  appPath: '/app',
  dockVisible: false,
  dock: {
    show: async () => {
      app.dockVisible = true;
    },
    hide: () => {
      app.dockVisible = false;
    },
  },
  requestSingleInstanceLock() {
    return this.singleInstance;
  },
  quit() {
    this.quitCalls++;
  },
  whenReady() {
    return Promise.resolve();
  },
  getAppPath() {
    return this.appPath;
  },
  loginItem: { openAtLogin: false, wasOpenedAtLogin: false, args: [] as string[] },
  setBadgeCount(n: number) {
    this.badge = n;
    return true;
  },
  getLoginItemSettings() {
    return { ...this.loginItem };
  },
  setLoginItemSettings(s: { openAtLogin: boolean; args?: string[] }) {
    this.loginItem = { ...this.loginItem, openAtLogin: s.openAtLogin, args: s.args ?? [] };
  },
});

export const session = {
  defaultSession: {
    permissionRequest: null as Handler | null,
    permissionCheck: null as Handler | null,
    devicePermission: null as Handler | null,
    headersReceived: null as Handler | null,
    setPermissionRequestHandler(h: Handler) {
      this.permissionRequest = h;
    },
    setPermissionCheckHandler(h: Handler) {
      this.permissionCheck = h;
    },
    setDevicePermissionHandler(h: Handler) {
      this.devicePermission = h;
    },
    webRequest: {
      onHeadersReceived(h: Handler) {
        session.defaultSession.headersReceived = h;
      },
    },
  },
};

export const protocol = {
  privileged: [] as unknown[],
  handlers: new Map<string, (request: Request) => Promise<Response>>(),
  registerSchemesAsPrivileged(schemes: unknown[]) {
    this.privileged.push(...schemes);
  },
  handle(scheme: string, handler: (request: Request) => Promise<Response>) {
    this.handlers.set(scheme, handler);
  },
};

/** Forget everything the fakes recorded. */
export function resetElectron(): void {
  BrowserWindow.created = [];
  Tray.created = [];
  Notification.shown = [];
  Notification.supported = true;
  ipcMain.handlers.clear();
  ipcRenderer.removeAllListeners();
  ipcRenderer.invoke.mockClear();
  contextBridge.exposed.clear();
  shell.openExternal.mockClear();
  shell.openPath.mockClear();
  app.badge = 0;
  app.singleInstance = true;
  app.quitCalls = 0;
  app.appPath = '/app';
  app.dockVisible = false;
  app.removeAllListeners();
  app.loginItem = { openAtLogin: false, wasOpenedAtLogin: false, args: [] };
  protocol.privileged = [];
  protocol.handlers.clear();
}
