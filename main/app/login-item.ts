import { mkdir, rm, writeFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import type { App } from 'electron';

/** Passed when the system starts us at login: come up in the tray, no window. */
const HIDDEN_FLAG = '--hidden';
const DESKTOP_FILE = 'gatehouse.desktop';

type LoginApp = Pick<App, 'getLoginItemSettings' | 'setLoginItemSettings'>;

export interface LoginItemOptions {
  platform: NodeJS.Platform;
  /** Linux: ~/.config/autostart */
  autostartDir: string;
  /** Linux: what to launch (the AppImage when there is one) */
  execPath: string;
}

/** Quote an Exec= argument as the Desktop Entry spec asks. */
function desktopExecArg(arg: string): string {
  return `"${arg.replace(/(["`$\\])/g, '\\$1')}"`;
}

export function autostartEntry(execPath: string): string {
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Name=Gatehouse',
    'Comment=Local MCP gateway',
    `Exec=${desktopExecArg(execPath)} ${HIDDEN_FLAG}`,
    'X-GNOME-Autostart-enabled=true',
    'Terminal=false',
    '',
  ].join('\n');
}

/**
 * Optional start at login. macOS and Windows keep it in the system's login
 * items (Electron's API); Linux has no such API, so an XDG autostart entry
 * is written or removed.
 */
export async function getOpenAtLogin(app: LoginApp, opts: LoginItemOptions): Promise<boolean> {
  if (opts.platform === 'linux') {
    return access(join(opts.autostartDir, DESKTOP_FILE)).then(
      () => true,
      () => false,
    );
  }
  return app.getLoginItemSettings({ args: [HIDDEN_FLAG] }).openAtLogin;
}

export async function setOpenAtLogin(app: LoginApp, enabled: boolean, opts: LoginItemOptions): Promise<void> {
  if (opts.platform === 'linux') {
    const file = join(opts.autostartDir, DESKTOP_FILE);
    if (!enabled) return rm(file, { force: true });
    await mkdir(opts.autostartDir, { recursive: true });
    await writeFile(file, autostartEntry(opts.execPath), { mode: 0o644 });
    return;
  }
  app.setLoginItemSettings({ openAtLogin: enabled, args: [HIDDEN_FLAG] });
}

/** Started by the system at login (so: stay in the tray)? */
export function startedHidden(
  argv: readonly string[],
  app: Pick<App, 'getLoginItemSettings'>,
  platform: NodeJS.Platform,
): boolean {
  if (argv.includes(HIDDEN_FLAG)) return true;
  return platform === 'darwin' && app.getLoginItemSettings().wasOpenedAtLogin === true;
}
