import { constants } from 'node:fs';
import { access, lstat, readlink, realpath, stat } from 'node:fs/promises';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';

/**
 * What a confined server must see to run at all, found from its command
 * line: the program (its real path, so the symlinks on the way need not
 * exist inside), its runtime's install folder, and the package of the
 * script it runs. Everything else of the machine stays absent.
 */

export interface RuntimeMounts {
  /** the program to exec inside, as a real path */
  exec: string;
  /** folders (or files) mounted read-only at the same path */
  readOnly: string[];
  /** paths the command line names that are symlinks, recreated inside so they resolve as outside */
  symlinks: Array<{ path: string; target: string }>;
}

/** System folders every backend makes readable (libraries, the shell, certificates for TLS through the proxy). */
export const SYSTEM_READ_ONLY = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt'] as const;
export const ETC_READ_ONLY = [
  '/etc/passwd',
  '/etc/group',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/pki',
  '/etc/alternatives',
  '/etc/localtime',
  '/etc/os-release',
  '/etc/mime.types',
] as const;

const exists = (p: string) =>
  access(p, constants.F_OK).then(
    () => true,
    () => false,
  );
const isFile = (p: string) =>
  stat(p).then(
    (s) => s.isFile(),
    () => false,
  );

/** `command` as the SDK would spawn it: a path as given, a bare name looked up on PATH. */
export async function whichCommand(command: string, pathEnv: string, cwd: string): Promise<string | null> {
  if (command.includes('/')) {
    const p = resolve(cwd, command);
    return (await isFile(p)) ? p : null;
  }
  for (const dir of pathEnv.split(delimiter).filter(Boolean)) {
    const p = join(dir, command);
    if (await isFile(p)) return p;
  }
  return null;
}

/** Folders never mounted whole as a runtime or package root: they hold far more than one program. */
const tooBroad = (p: string, home: string) =>
  p === '/' ||
  p === home ||
  home.startsWith(`${p}${sep}`) ||
  ['/usr', '/tmp', '/var', '/etc', '/home', '/root'].includes(p);

/** The install folder of a runtime binary: `<prefix>/bin/node` gives `<prefix>`; `~/.local/bin/x` gives its bin and lib only. */
function runtimeFolders(real: string, home: string): string[] {
  const bin = dirname(real);
  if (basename(bin) !== 'bin') return [bin];
  const prefix = dirname(bin);
  if (prefix === join(home, '.local')) return [bin, join(prefix, 'lib')];
  return tooBroad(prefix, home) ? [bin] : [prefix];
}

/**
 * The package a script belongs to: the whole `node_modules` tree it sits in
 * (its dependencies are hoisted beside it), else the nearest folder with a
 * package.json, pyproject.toml or .git, else the script's own folder.
 */
async function packageFolders(script: string, home: string): Promise<string[]> {
  const parts = script.split(sep);
  const nm = parts.indexOf('node_modules');
  if (nm > 0) return [parts.slice(0, nm + 1).join(sep)];
  for (let dir = dirname(script); dir !== dirname(dir); dir = dirname(dir)) {
    if (tooBroad(dir, home)) break;
    for (const marker of ['package.json', 'pyproject.toml', '.git'])
      if (await exists(join(dir, marker))) {
        const out = [dir];
        // A checkout whose node_modules is a link elsewhere (a worktree): the link's target too.
        const modules = join(dir, 'node_modules');
        const l = await lstat(modules).catch(() => null);
        if (l?.isSymbolicLink()) out.push(await realpath(modules));
        return out;
      }
  }
  return [dirname(script)];
}

/** Each symlink on the way to `p` (a path the command line names), so it resolves inside as it does outside. */
async function linksOn(p: string): Promise<Array<{ path: string; target: string }>> {
  const out: Array<{ path: string; target: string }> = [];
  let cur = '/';
  for (const part of p.split(sep).filter(Boolean)) {
    const next = join(cur, part);
    const l = await lstat(next).catch(() => null);
    if (!l) break;
    if (l.isSymbolicLink()) {
      out.push({ path: next, target: await readlink(next) });
      cur = await realpath(next);
    } else cur = next;
  }
  return out;
}

export async function runtimeMounts(opts: {
  command: string;
  args: readonly string[];
  cwd: string;
  pathEnv: string;
  home: string;
}): Promise<RuntimeMounts> {
  const found = await whichCommand(opts.command, opts.pathEnv, opts.cwd);
  // Worded as an unconfined start's spawn failure is (connection.ts), so a missing program reads the same either way.
  if (!found)
    throw new Error(
      opts.command.includes('/')
        ? `command not found: ${opts.command}`
        : `command not found: ${opts.command} (not on the PATH servers get: ${opts.pathEnv || '(empty)'})`,
    );
  const exec = await realpath(found);
  const readOnly = new Set(runtimeFolders(exec, opts.home));
  const symlinks: RuntimeMounts['symlinks'] = [];
  // The script (the first argument naming a file) and its package: a path the server is given, readable as it was named.
  for (const a of opts.args) {
    if (a.startsWith('-')) continue;
    const p = isAbsolute(a) ? a : resolve(opts.cwd, a);
    if (!(await isFile(p))) continue;
    for (const f of await packageFolders(await realpath(p), opts.home)) readOnly.add(f);
    symlinks.push(...(await linksOn(p)));
    break;
  }
  return { exec, readOnly: [...readOnly], symlinks };
}
