import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SandboxGrant } from '../../../contract/upstreams.ts';
import { bwrapArgv, PROXY_PORT } from './bwrap-argv.ts';
import { expandHome } from '../../../contract/sandbox-grants.ts';
import { ETC_READ_ONLY, runtimeMounts, SYSTEM_READ_ONLY } from './mounts.ts';
import { seatbeltProfile } from './seatbelt-profile.ts';

/**
 * The OS layer of confinement: one interface, a backend per platform. A
 * backend turns "run this command with these grants" into the command line
 * that does it (bubblewrap's argv on Linux, sandbox-exec with a generated
 * profile on macOS). Policy (what is granted) and the network proxy stay in
 * the gateway (confinement.ts, net-proxy.ts).
 */

export interface ConfinedStart {
  command: string;
  args: readonly string[];
  /** the environment the server gets (the SDK's minimal set and the configured variables) */
  env: Record<string, string>;
  grants: readonly SandboxGrant[];
  /** the person's HOME */
  home: string;
  /** the upstream's own persistent HOME under the data dir (exists) */
  privateHome: string;
  /** the upstream's own temp folder (macOS; Linux gets a fresh tmpfs) */
  privateTmp: string;
  /** Gatehouse's data dir: absent inside even under a grant */
  dataDir: string;
  cwd: string;
  /** this child's proxy: a Unix socket path (Linux) or a loopback port (macOS); null without a network grant */
  proxy: { path: string } | { port: number } | null;
}

export interface PreparedStart {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** every folder the server can see, for telling a refusal from an ordinary error in its stderr */
  visible: string[];
}

export interface Sandbox {
  readonly backend: 'bubblewrap' | 'seatbelt';
  /** where this backend's children reach their proxy: a socket file or a loopback port */
  readonly proxyKind: 'unix' | 'tcp';
  prepare(req: ConfinedStart): Promise<PreparedStart>;
}

/** The variables that send a confined server's HTTP through its proxy. NO_PROXY is cleared: a granted `localhost` service is reached through the proxy too (the namespace's own loopback has nothing on it). */
export function proxyEnv(url: string): Record<string, string> {
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: '',
    no_proxy: '',
    // Node 22.21+/24.5+: fetch and http follow HTTP(S)_PROXY only with this (an older Node ignores it: its requests are refused, not leaked).
    NODE_USE_ENV_PROXY: '1',
  };
}

/** Granted folders as mounts: the real path on the host, at the path the person named. A grant that does not exist is an error, never skipped. */
export async function grantMounts(
  grants: readonly SandboxGrant[],
  kind: 'read' | 'write',
  home: string,
): Promise<Array<{ src: string; dest: string }>> {
  const out: Array<{ src: string; dest: string }> = [];
  for (const g of grants.filter((x) => x.kind === kind)) {
    const dest = expandHome(g.value, home);
    const src = await realpath(dest).catch(() => {
      throw new Error(
        `the granted folder ${g.value} does not exist: create it, or change the grants (gatehouse upstreams grant ID ...)`,
      );
    });
    // The namespace's own /proc, /dev and root, and the host's /run (its sockets, other children's proxies among them), are never a grant.
    if (src === '/' || NEVER_GRANTED.some((n) => under(src, n)))
      throw new Error(
        `${g.value} cannot be granted: it would show the host's ${src === '/' ? 'whole file system' : src}`,
      );
    out.push({ src, dest });
  }
  return out;
}

const NEVER_GRANTED = ['/proc', '/sys', '/dev', '/run', '/var/run'];

const under = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

export class BubblewrapSandbox implements Sandbox {
  readonly backend = 'bubblewrap' as const;
  readonly proxyKind = 'unix' as const;
  constructor(private readonly opts: { bwrap: string; disableUserns: boolean }) {}

  async prepare(req: ConfinedStart): Promise<PreparedStart> {
    const mounts = await runtimeMounts({ ...req, pathEnv: req.env.PATH ?? '' });
    const system: Array<{ path: string; link: string | null }> = [];
    for (const path of [...SYSTEM_READ_ONLY, ...ETC_READ_ONLY]) {
      const l = await lstat(path).catch(() => null);
      if (l) system.push({ path, link: l.isSymbolicLink() ? await readlink(path) : null });
    }
    const read = await grantMounts(req.grants, 'read', req.home);
    const write = await grantMounts(req.grants, 'write', req.home);
    // What it sees of the host (its own HOME and /tmp are not the host's: a path there it cannot find is a refusal too).
    const visible = [
      ...system.filter((s) => !s.link).map((s) => s.path),
      ...mounts.readOnly,
      ...read.map((g) => g.dest),
      ...write.map((g) => g.dest),
    ];
    const args = bwrapArgv({
      exec: mounts.exec,
      args: req.args,
      system,
      readOnly: mounts.readOnly,
      symlinks: mounts.symlinks,
      home: { path: req.home, privateDir: req.privateHome },
      read,
      write,
      cover: [req.dataDir],
      cwd: visible.some((v) => under(req.cwd, v)) && !under(req.cwd, req.dataDir) ? req.cwd : req.home,
      disableUserns: this.opts.disableUserns,
      proxySocket: req.proxy && 'path' in req.proxy ? req.proxy.path : null,
    });
    const env = { ...req.env, ...(req.proxy ? proxyEnv(`http://127.0.0.1:${PROXY_PORT}`) : {}) };
    return { command: this.opts.bwrap, args, env, cwd: dirname(req.privateHome), visible };
  }
}

export class SeatbeltSandbox implements Sandbox {
  readonly backend = 'seatbelt' as const;
  readonly proxyKind = 'tcp' as const;
  constructor(private readonly opts: { sandboxExec: string }) {}

  async prepare(req: ConfinedStart): Promise<PreparedStart> {
    const mounts = await runtimeMounts({ ...req, pathEnv: req.env.PATH ?? '' });
    const read = await grantMounts(req.grants, 'read', req.home);
    const write = await grantMounts(req.grants, 'write', req.home);
    const port = req.proxy && 'port' in req.proxy ? req.proxy.port : null;
    const profile = seatbeltProfile({
      readOnly: [...mounts.readOnly, dirname(mounts.exec)],
      read: read.map((g) => g.src),
      write: write.map((g) => g.src),
      privateDirs: [req.privateHome, req.privateTmp],
      proxyPort: port,
    });
    // No mounts on macOS: HOME and TMPDIR point at the upstream's own folders instead.
    const env = {
      ...req.env,
      HOME: req.privateHome,
      TMPDIR: req.privateTmp,
      ...(port !== null ? proxyEnv(`http://127.0.0.1:${port}`) : {}),
    };
    return {
      command: this.opts.sandboxExec,
      args: ['-p', profile, '--', mounts.exec, ...req.args],
      env,
      cwd: req.privateHome,
      visible: [...mounts.readOnly, ...read.map((g) => g.dest), ...write.map((g) => g.dest)],
    };
  }
}
