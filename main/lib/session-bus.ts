import { lstatSync } from 'node:fs';

/**
 * The user's D-Bus session bus when the environment does not name it.
 *
 * The keychain on Linux (keytar -> libsecret -> the Secret Service) is reached
 * over the session bus, which libsecret finds through
 * `DBUS_SESSION_BUS_ADDRESS`. Some MCP clients start their servers with a
 * pared-down environment (the Python SDK's stdio client keeps only HOME,
 * LOGNAME, PATH, SHELL, TERM and USER), so a bridge they start cannot reach
 * the keychain although the user's session has one. systemd (and every
 * desktop that uses it) puts the session bus at `$XDG_RUNTIME_DIR/bus`, that
 * is `/run/user/<uid>/bus`; GLib looks in `$XDG_RUNTIME_DIR` by itself, but a
 * client that drops one variable drops both, and then GLib tries X11
 * autolaunch and fails. The first of those paths that is a socket owned by
 * this user is taken. Nothing else is guessed, and a bus named in the
 * environment is never replaced.
 */
export interface BusProbe {
  uid: number;
  platform: NodeJS.Platform;
  /** lstat, never following a link: a link could point at another user's bus */
  stat(path: string): { isSocket(): boolean; uid: number } | null;
}

const realProbe = (): BusProbe => ({
  uid: typeof process.getuid === 'function' ? process.getuid() : -1,
  platform: process.platform,
  stat: (path) => {
    try {
      return lstatSync(path);
    } catch {
      return null;
    }
  },
});

/** A path in a D-Bus address: every byte outside `[-0-9A-Za-z_/.\*]` as %XX (the D-Bus specification, "Server Addresses"). */
export function busAddress(path: string): string {
  return `unix:path=${[...Buffer.from(path, 'utf8')]
    .map((b) => {
      const c = String.fromCharCode(b);
      return /[-0-9A-Za-z_/.\\*]/.test(c) ? c : `%${b.toString(16).padStart(2, '0')}`;
    })
    .join('')}`;
}

/** The session bus address to use, or null: one is named already, none is found, or this is not a D-Bus platform. */
export function findSessionBus(env: Record<string, string | undefined>, probe: BusProbe = realProbe()): string | null {
  if (env.DBUS_SESSION_BUS_ADDRESS) return null;
  if (probe.platform === 'darwin' || probe.platform === 'win32' || probe.uid < 0) return null;
  const runtime = env.XDG_RUNTIME_DIR;
  // GATEHOUSE_RUN_USER_DIR stands for /run/user where there is no systemd (the tests' throwaway session bus).
  const runUser = env.GATEHOUSE_RUN_USER_DIR?.startsWith('/') ? env.GATEHOUSE_RUN_USER_DIR : '/run/user';
  const candidates = [
    ...(runtime && runtime.startsWith('/') ? [`${runtime.replace(/\/+$/, '')}/bus`] : []),
    `${runUser.replace(/\/+$/, '')}/${probe.uid}/bus`,
  ];
  for (const path of candidates) {
    const st = probe.stat(path);
    if (st?.isSocket() && st.uid === probe.uid) return busAddress(path);
  }
  return null;
}

/**
 * Names the session bus in this process's environment when it is missing and
 * found (libsecret reads the variable when it first connects, so this runs
 * before the keychain is opened). Answers the address set, or null.
 */
export function useSessionBus(env: Record<string, string | undefined> = process.env, probe?: BusProbe): string | null {
  const found = findSessionBus(env, probe);
  if (!found) return null;
  process.env.DBUS_SESSION_BUS_ADDRESS = found;
  env.DBUS_SESSION_BUS_ADDRESS = found;
  return found;
}
