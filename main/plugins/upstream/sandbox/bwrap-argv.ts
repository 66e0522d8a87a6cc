/**
 * The bubblewrap command line for one confined server (Linux), as an argv:
 * never a shell string, so no value the person or the server chose is ever
 * parsed by a shell. Pure: the folders are found by mounts.ts, the proxy
 * socket by net-proxy.ts. The mounts are an allowlist: what is not named
 * here does not exist inside (`~/.ssh`, the vault, Gatehouse's data dir).
 */

export interface BwrapPlan {
  /** the program (a real path) and its arguments */
  exec: string;
  args: readonly string[];
  /** system folders and files, mounted read-only if they exist; a host symlink (`/bin -> usr/bin`) stays one */
  system: ReadonlyArray<{ path: string; link: string | null }>;
  /** the runtime's and the package's folders, read-only */
  readOnly: readonly string[];
  /** symlinks the command line's paths go through, recreated inside */
  symlinks: ReadonlyArray<{ path: string; target: string }>;
  /** the person's HOME path and the upstream's own folder mounted there (read-write, persistent) */
  home: { path: string; privateDir: string };
  /** granted folders: `src` is the real path, `dest` the path as the person named it */
  read: ReadonlyArray<{ src: string; dest: string }>;
  write: ReadonlyArray<{ src: string; dest: string }>;
  /** folders that must stay absent even under a grant (Gatehouse's data dir) */
  cover: readonly string[];
  /** the working folder inside */
  cwd: string;
  /** bubblewrap 0.8+: forbid the server making user namespaces of its own */
  disableUserns: boolean;
  /** the per-child proxy socket on the host, bound into the namespace and bridged to 127.0.0.1:PROXY_PORT by socat */
  proxySocket: string | null;
}

/** Where the child's proxy socket appears inside, and the loopback port socat serves it on. */
export const INNER_PROXY_SOCKET = '/run/gatehouse/proxy.sock';
export const PROXY_PORT = 3128;

/**
 * With a network grant the server starts behind a tiny launcher: socat
 * listens on 127.0.0.1:3128 and bridges to the proxy socket; the launcher
 * waits until the listener shows in /proc/net/tcp (socat's start-up race),
 * then execs the server. socat is in the server's PID namespace: it dies
 * with it, whichever way the server ends. A fixed script; the server's argv
 * reaches it as "$@", never as text.
 */
export const LAUNCHER = [
  `socat TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${INNER_PROXY_SOCKET} &`,
  'i=0',
  `while ! grep -q ':${PROXY_PORT.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A' /proc/net/tcp; do`,
  '  i=$((i+1))',
  '  if [ "$i" -gt 1000 ]; then echo "gatehouse sandbox: the network bridge (socat) did not start" >&2; exit 70; fi',
  '  sleep 0.005',
  'done',
  'exec "$@"',
].join('\n');

const under = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

export function bwrapArgv(plan: BwrapPlan): string[] {
  const a: string[] = [
    // Every namespace of its own: no network but its own loopback, no view of other processes, no host IPC.
    '--unshare-all',
    '--unshare-user',
    ...(plan.disableUserns ? ['--disable-userns'] : []),
    // Ends when Gatehouse ends, however it ends; a session of its own, so it cannot push input into a terminal (TIOCSTI).
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
  ];
  for (const s of plan.system)
    if (s.link !== null) a.push('--symlink', s.link, s.path);
    else a.push('--ro-bind-try', s.path, s.path);
  a.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  a.push('--bind', plan.home.privateDir, plan.home.path);
  const systemMounts = plan.system.filter((s) => s.link === null).map((s) => s.path);
  // A runtime under /usr is there already; one elsewhere (/opt/node, ~/.nvm/...) is mounted at its own path.
  for (const p of plan.readOnly) if (!systemMounts.some((m) => under(p, m))) a.push('--ro-bind', p, p);
  const mounted = [...plan.readOnly, ...systemMounts];
  for (const l of plan.symlinks) if (!mounted.some((m) => under(l.path, m))) a.push('--symlink', l.target, l.path);
  for (const g of plan.read) a.push('--ro-bind', g.src, g.dest);
  for (const g of plan.write) a.push('--bind', g.src, g.dest);
  // The private HOME is not the person's: only what shows host folders needs the data dir covered.
  const visible = [...plan.readOnly, ...plan.read.map((g) => g.dest), ...plan.write.map((g) => g.dest)];
  for (const c of plan.cover) if (visible.some((v) => under(c, v))) a.push('--tmpfs', c);
  if (plan.proxySocket) a.push('--bind', plan.proxySocket, INNER_PROXY_SOCKET);
  // Nothing else may be written: the root bubblewrap builds is read-only once set up.
  a.push('--remount-ro', '/', '--chdir', plan.cwd, '--');
  if (plan.proxySocket) a.push('/bin/sh', '-c', LAUNCHER, 'gatehouse-sandbox', plan.exec, ...plan.args);
  else a.push(plan.exec, ...plan.args);
  return a;
}
