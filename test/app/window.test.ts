import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('./electron-mock.ts'));
const electron = await import('./electron-mock.ts');
const { ConsoleWindows } = await import('../../main/app/window.ts');

beforeEach(() => electron.resetElectron());

const open = (screen?: 'approvals') => {
  const windows = new ConsoleWindows({ preload: '/app/dist/main/app/preload.cjs' });
  windows.show(screen);
  return { windows, win: electron.BrowserWindow.created[0]! };
};

describe('console window', () => {
  it('is created with every item of the security checklist', () => {
    const { win } = open();
    expect(win.options.webPreferences).toMatchObject({
      preload: '/app/dist/main/app/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
    });
    expect(win.options.show).toBe(false);
    expect(win.loaded).toEqual(['app://console/index.html']);
  });

  it('blocks navigation away from the console, webviews and window.open', () => {
    const { win } = open();
    expect(win.webContents.navigate('will-navigate', 'https://evil.example/')).toBe(true);
    expect(win.webContents.navigate('will-redirect', 'file:///etc/passwd')).toBe(true);
    expect(win.webContents.navigate('will-frame-navigate', 'http://127.0.0.1:7823/')).toBe(true);
    expect(win.webContents.navigate('will-navigate', 'app://console/index.html#tokens')).toBe(false);
    let prevented = false;
    win.webContents.emit('will-attach-webview', { preventDefault: () => (prevented = true) });
    expect(prevented).toBe(true);
    const handler = win.webContents.windowOpenHandler!;
    expect(handler({ url: 'https://evil.example/' })).toEqual({ action: 'deny' });
    expect(handler({ url: 'http://github.com/x' })).toEqual({ action: 'deny' });
    expect(electron.shell.openExternal).not.toHaveBeenCalled();
    // an allow-listed https page opens in the system browser, never in the app
    expect(handler({ url: 'https://github.com/gatehouse/gatehouse/issues' })).toEqual({ action: 'deny' });
    expect(electron.shell.openExternal).toHaveBeenCalledWith('https://github.com/gatehouse/gatehouse/issues');
  });

  it('hides to the tray on close, and closes for real when the app quits', () => {
    const { windows, win } = open();
    win.emit('ready-to-show');
    expect(win.visible).toBe(true);
    expect(win.userClose()).toBe(false);
    expect(win.visible).toBe(false);
    expect(windows.owns(win.webContents as never)).toBe(true);
    windows.allowClose();
    expect(win.userClose()).toBe(true);
    expect(windows.owns(win.webContents as never)).toBe(false);
  });

  it('reuses the one window and opens it on the asked screen', () => {
    const { windows, win } = open();
    win.hide();
    windows.show('approvals');
    expect(electron.BrowserWindow.created).toHaveLength(1);
    expect(win.visible).toBe(true);
    expect(win.loaded).toEqual(['app://console/index.html', 'app://console/index.html#approvals']);
  });

  it('knows its own web contents and sends live updates only there', () => {
    const { windows, win } = open();
    const stranger = new electron.FakeWebContents();
    expect(windows.owns(win.webContents as never)).toBe(true);
    expect(windows.owns(stranger as never)).toBe(false);
    windows.send('gatehouse:event', { type: 'health' });
    expect(win.webContents.sent).toEqual([{ channel: 'gatehouse:event', payload: { type: 'health' } }]);
    expect(stranger.sent).toEqual([]);
  });
});
