import type { SandboxGrant } from './upstreams.ts';

/**
 * What a confined stdio upstream is granted beyond its runtime and package:
 * the person's grants plus what its command line suggests (the folders
 * server-filesystem is given, a `--repository` path, a package runner's
 * registry). Pure, and shared: the console's consent step shows the same
 * suggestions the service will apply. Paths are compared as text; the
 * sandbox resolves them.
 */

/** A package runner a client config starts servers through, and the registry hosts it fetches the package from. */
export interface Runner {
  name: string;
  registry: string;
  hosts: string[];
}

const NPM: Omit<Runner, 'name'> = { registry: 'registry.npmjs.org', hosts: ['registry.npmjs.org'] };
const PYPI: Omit<Runner, 'name'> = { registry: 'pypi.org', hosts: ['pypi.org', 'files.pythonhosted.org'] };

export function runnerOf(command: string, args: readonly string[]): Runner | null {
  const name = (command.split(/[\\/]/).pop() ?? command).replace(/\.(cmd|exe)$/i, '');
  if (name === 'npx' || name === 'bunx') return { name, ...NPM };
  if ((name === 'npm' && args[0] === 'exec') || (name === 'pnpm' && args[0] === 'dlx'))
    return { name: `${name} ${args[0]}`, ...NPM };
  if (name === 'uvx' || name === 'pipx') return { name, ...PYPI };
  if (name === 'uv' && args[0] === 'tool' && args[1] === 'run') return { name: 'uv tool run', ...PYPI };
  return null;
}

/** `~` and `~/x` against the person's HOME; anything else as given. */
export const expandHome = (p: string, home: string): string =>
  p === '~' ? home : p.startsWith('~/') ? `${home}/${p.slice(2)}` : p;

const isPathLike = (a: string) => a.startsWith('/') || a === '~' || a.startsWith('~/');

/**
 * Grants the command line itself asks for: server-filesystem's folder
 * arguments (it is given them to read and write), a git server's
 * `--repository PATH`, a runner's registry. Only absolute or `~` paths: a
 * relative one depends on a working folder the person did not see.
 */
export function suggestedGrants(command: string, args: readonly string[]): SandboxGrant[] {
  const out: SandboxGrant[] = [];
  const at = args.findIndex((a) => /server-filesystem(@[^/\s]*)?(\/|$)|server-filesystem\/dist\/index\.js$/.test(a));
  if (at !== -1)
    for (const a of args.slice(at + 1)) if (isPathLike(a)) out.push({ kind: 'write', value: a, from: 'command_line' });
  args.forEach((a, i) => {
    const v = a === '--repository' || a === '-r' ? args[i + 1] : a.startsWith('--repository=') ? a.slice(13) : null;
    if (v && isPathLike(v)) out.push({ kind: 'write', value: v, from: 'command_line' });
  });
  for (const h of runnerOf(command, args)?.hosts ?? []) out.push({ kind: 'net', value: h, from: 'runner' });
  return dedupe(out);
}

/** The person's grants first, then the suggestions they do not already cover; one entry per kind and value. */
export function mergeGrants(
  person: { read: readonly string[]; write: readonly string[]; net: readonly string[] },
  suggested: readonly SandboxGrant[],
): SandboxGrant[] {
  const own: SandboxGrant[] = [
    ...person.read.map((value) => ({ kind: 'read' as const, value, from: 'person' as const })),
    ...person.write.map((value) => ({ kind: 'write' as const, value, from: 'person' as const })),
    ...person.net.map((value) => ({ kind: 'net' as const, value: value.toLowerCase(), from: 'person' as const })),
  ];
  return dedupe([...own, ...suggested]);
}

function dedupe(grants: SandboxGrant[]): SandboxGrant[] {
  const seen = new Set<string>();
  return grants.filter((g) => {
    const key = `${g.kind}\0${g.value}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** One line per grant, for a consent step or a log: `write ~/notes (from the command line)`. */
export function grantLines(grants: readonly SandboxGrant[]): string[] {
  const from = { person: '', command_line: ' (from the command line)', runner: ' (for the package runner)' } as const;
  return grants.map((g) => `${g.kind === 'net' ? 'network' : g.kind} ${g.value}${from[g.from]}`);
}

/** What is stored for a new (or re-granted) stdio upstream: unconfined only when a person said so; the grants merged with the suggestions unless turned off. */
export function sandboxOf(
  command: string,
  args: readonly string[],
  input: { unconfined?: boolean; read?: string[]; write?: string[]; net?: string[]; suggest?: boolean } | undefined,
): { unconfined: boolean; grants: SandboxGrant[] } {
  const person = { read: input?.read ?? [], write: input?.write ?? [], net: input?.net ?? [] };
  return {
    unconfined: input?.unconfined ?? false,
    grants: mergeGrants(person, input?.suggest === false ? [] : suggestedGrants(command, args)),
  };
}
