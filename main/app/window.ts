import { BrowserWindow, shell } from 'electron';
import type { WebContents } from 'electron';
import { appUrl, isAppUrl } from './app-url.ts';
import type { ConsoleScreen } from './app-url.ts';
import { isAllowedExternal, secureWebPreferences } from './security.ts';

export interface ConsoleWindowOptions {
  /** the bundled preload (dist/main/app/preload.cjs) */
  preload: string;
  icon?: string;
  /** called when the window is shown or hidden (macOS shows the Dock icon only while it is visible) */
  onVisibility?: (visible: boolean) => void;
}

/**
 * Navigation rules for a console page: it stays on app://console/, never
 * opens windows, never embeds webviews; an allow-listed https link opens in
 * the system browser instead.
 */
export function guardContents(contents: WebContents): void {
  const stayHome = (event: { url: string; preventDefault(): void }) => {
    if (!isAppUrl(event.url)) event.preventDefault();
  };
  contents.on('will-navigate', stayHome);
  contents.on('will-redirect', stayHome);
  contents.on('will-frame-navigate', stayHome);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (isAllowedExternal(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
}

/**
 * The console window: one at a time, created with the secure options,
 * hidden (not closed) when the user closes it, so the app lives on in the
 * tray. `owns` tells the IPC registrar which senders are ours.
 */
export class ConsoleWindows {
  private window: BrowserWindow | null = null;
  private readonly contentsIds = new Set<number>();
  private quitting = false;

  constructor(private readonly options: ConsoleWindowOptions) {}

  /** Whether `contents` belongs to a window this class created (and still exists). */
  owns(contents: WebContents): boolean {
    return this.contentsIds.has(contents.id) && !contents.isDestroyed();
  }

  /** Show the console, on `screen` when given (a fragment change: no reload when it is already open). */
  show(screen?: ConsoleScreen, focus?: string): BrowserWindow {
    const existing = this.window;
    if (existing && !existing.isDestroyed()) {
      if (screen) void existing.loadURL(appUrl(screen, focus));
      if (existing.isMinimized()) existing.restore();
      existing.show();
      existing.focus();
      this.options.onVisibility?.(true);
      return existing;
    }
    const win = this.create();
    void win.loadURL(appUrl(screen, focus));
    return win;
  }

  /** Send a live update to every console page we created. */
  send(channel: string, payload: unknown): void {
    const win = this.window;
    if (win && !win.isDestroyed() && this.owns(win.webContents)) win.webContents.send(channel, payload);
  }

  /** From now on closing the window really closes it (the app is quitting). */
  allowClose(): void {
    this.quitting = true;
  }

  private create(): BrowserWindow {
    const win = new BrowserWindow({
      width: 1180,
      height: 820,
      minWidth: 720,
      minHeight: 520,
      show: false,
      title: 'Gatehouse',
      backgroundColor: '#111418',
      autoHideMenuBar: true,
      ...(this.options.icon ? { icon: this.options.icon } : {}),
      webPreferences: secureWebPreferences(this.options.preload),
    });
    const id = win.webContents.id;
    this.contentsIds.add(id);
    this.window = win;
    guardContents(win.webContents);
    win.once('ready-to-show', () => {
      win.show();
      this.options.onVisibility?.(true);
    });
    win.on('close', (event) => {
      if (this.quitting) return;
      event.preventDefault();
      win.hide();
      this.options.onVisibility?.(false);
    });
    win.on('closed', () => {
      this.contentsIds.delete(id);
      if (this.window === win) this.window = null;
    });
    return win;
  }
}
