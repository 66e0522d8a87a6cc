import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('./electron-mock.ts'));
const electron = await import('./electron-mock.ts');
const { autostartEntry, getOpenAtLogin, setOpenAtLogin, startedHidden } = await import('../../main/app/login-item.ts');

let dir: string;
beforeEach(async () => {
  electron.resetElectron();
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-login-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('start at login', () => {
  it('on Linux writes and removes an XDG autostart entry that starts hidden', async () => {
    const opts = {
      platform: 'linux' as const,
      autostartDir: join(dir, 'autostart'),
      execPath: '/opt/My Apps/Gatehouse.AppImage',
    };
    expect(await getOpenAtLogin(electron.app as never, opts)).toBe(false);
    await setOpenAtLogin(electron.app as never, true, opts);
    expect(await getOpenAtLogin(electron.app as never, opts)).toBe(true);
    const text = await readFile(join(dir, 'autostart', 'gatehouse.desktop'), 'utf8');
    expect(text).toContain('Exec="/opt/My Apps/Gatehouse.AppImage" --hidden');
    await setOpenAtLogin(electron.app as never, false, opts);
    await expect(stat(join(dir, 'autostart', 'gatehouse.desktop'))).rejects.toThrow();
    expect(await getOpenAtLogin(electron.app as never, opts)).toBe(false);
  });

  it('quotes the Exec path as the Desktop Entry spec asks', () => {
    expect(autostartEntry('/a "b"/$c`d\\e')).toContain('Exec="/a \\"b\\"/\\$c\\`d\\\\e" --hidden');
  });

  it('on macOS and Windows uses the system login items', async () => {
    const opts = { platform: 'win32' as const, autostartDir: dir, execPath: 'x' };
    await setOpenAtLogin(electron.app as never, true, opts);
    expect(electron.app.loginItem).toMatchObject({ openAtLogin: true, args: ['--hidden'] });
    expect(await getOpenAtLogin(electron.app as never, opts)).toBe(true);
  });

  it('knows when it was started at login', () => {
    expect(startedHidden(['electron', '.', '--hidden'], electron.app as never, 'linux')).toBe(true);
    expect(startedHidden(['electron', '.'], electron.app as never, 'linux')).toBe(false);
    electron.app.loginItem.wasOpenedAtLogin = true;
    expect(startedHidden(['Gatehouse'], electron.app as never, 'darwin')).toBe(true);
  });
});
