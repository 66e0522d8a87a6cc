import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs';

/**
 * Whether this machine can confine a server, asked once per process and
 * asynchronously (a synchronous spawn would stall every child's proxy,
 * which runs on the service's event loop). Distributions differ: bubblewrap
 * may be missing, user namespaces may be off (a sysctl) or limited by
 * AppArmor (Ubuntu 24.04), `--disable-userns` needs bubblewrap 0.8.
 */

export type Detection =
  | { ok: true; backend: 'bubblewrap'; bwrap: string; socat: string | null; disableUserns: boolean; version: string }
  | { ok: true; backend: 'seatbelt'; sandboxExec: string }
  | { ok: false; backend: 'bubblewrap' | 'seatbelt' | null; why: string; fix: string };

const run = (file: string, args: string[]) =>
  new Promise<{ code: number; out: string }>((resolve) =>
    execFile(file, args, { timeout: 10_000 }, (e, stdout, stderr) =>
      resolve({
        code: e ? (typeof e.code === 'number' ? e.code : 1) : 0,
        out: `${String(stdout)}${String(stderr)}`.trim(),
      }),
    ),
  );

const present = (p: string) => new Promise<boolean>((r) => access(p, constants.X_OK, (e) => r(!e)));

async function find(name: string, pathEnv: string): Promise<string | null> {
  for (const dir of [...pathEnv.split(':').filter(Boolean), '/usr/bin', '/usr/local/bin'])
    if (await present(`${dir}/${name}`)) return `${dir}/${name}`;
  return null;
}

const INSTALL =
  'install bubblewrap and socat (Debian/Ubuntu: sudo apt-get install bubblewrap socat; Fedora: sudo dnf install bubblewrap socat)';

export async function detectLinux(pathEnv = process.env.PATH ?? ''): Promise<Detection> {
  const bwrap = await find('bwrap', pathEnv);
  if (!bwrap)
    return {
      ok: false,
      backend: 'bubblewrap',
      why: 'bubblewrap (bwrap) is not installed, so stdio servers cannot be confined',
      fix: `${INSTALL}, then: gatehouse upstreams test ID; or run this server unconfined on purpose: gatehouse upstreams grant ID --unconfined`,
    };
  const version = (await run(bwrap, ['--version'])).out.replace(/^bubblewrap\s*/i, '');
  // A real start: user namespaces may be refused although bwrap is there.
  const trial = await run(bwrap, ['--unshare-all', '--unshare-user', '--ro-bind', '/', '/', '--', 'true']);
  if (trial.code !== 0) {
    const apparmor = await present('/proc/sys/kernel/apparmor_restrict_unprivileged_userns');
    return {
      ok: false,
      backend: 'bubblewrap',
      why: `bubblewrap cannot create a user namespace here (${trial.out.slice(0, 200) || `exit ${trial.code}`})`,
      fix: apparmor
        ? 'AppArmor restricts unprivileged user namespaces (Ubuntu 24.04+): allow them for bwrap with an AppArmor profile (see docs/upstreams.md, "Confinement"), or set kernel.apparmor_restrict_unprivileged_userns=0'
        : 'enable user namespaces (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces > 0), then: gatehouse upstreams test ID',
    };
  }
  const disable = await run(bwrap, [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--ro-bind',
    '/',
    '/',
    '--',
    'true',
  ]);
  return {
    ok: true,
    backend: 'bubblewrap',
    bwrap,
    socat: await find('socat', pathEnv),
    disableUserns: disable.code === 0,
    version,
  };
}

export async function detectMacos(): Promise<Detection> {
  const sandboxExec = '/usr/bin/sandbox-exec';
  if (await present(sandboxExec)) return { ok: true, backend: 'seatbelt', sandboxExec };
  return {
    ok: false,
    backend: 'seatbelt',
    why: 'sandbox-exec was not found at /usr/bin/sandbox-exec',
    fix: 'check the macOS installation; or run this server unconfined on purpose: gatehouse upstreams grant ID --unconfined',
  };
}

let cached: Promise<Detection> | null = null;

/** This machine's answer, asked once; null on a platform with no backend (Windows). */
export function detectSandbox(platform: NodeJS.Platform = process.platform): Promise<Detection> | null {
  if (platform !== 'linux' && platform !== 'darwin') return null;
  cached ??= platform === 'linux' ? detectLinux() : detectMacos();
  return cached;
}
