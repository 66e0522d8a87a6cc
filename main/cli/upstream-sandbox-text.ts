import { runnerOf, sandboxOf } from '../contract/sandbox-grants.ts';
import type { SandboxGrant, SandboxGrantsInput, UpstreamConfinement, UpstreamView } from '../contract/upstreams.ts';
import { safe } from './output.ts';

/** The sandbox flags of `upstreams add --stdio` and `upstreams grant` (docs/upstreams.md, "Confinement"). */
export const grantFlags = {
  'allow-read': { type: 'string', multiple: true },
  'allow-write': { type: 'string', multiple: true },
  'allow-net': { type: 'string', multiple: true },
  unconfined: { type: 'boolean' },
  'no-suggest': { type: 'boolean' },
} as const;

/** `{sandbox: {...}}` when any sandbox flag was given, else nothing (the service then applies the defaults). */
export function sandboxInput(values: Record<string, unknown>): { sandbox?: Record<string, unknown> } {
  const list = (k: string) => (values[k] as string[] | undefined) ?? [];
  const given =
    ['allow-read', 'allow-write', 'allow-net'].some((k) => list(k).length) || values.unconfined || values['no-suggest'];
  if (!given) return {};
  return {
    sandbox: {
      read: list('allow-read'),
      write: list('allow-write'),
      net: list('allow-net'),
      ...(values.unconfined ? { unconfined: true } : {}),
      ...(values['no-suggest'] ? { suggest: false } : {}),
    },
  };
}

const FROM = { person: '', command_line: '  (from the command line)', runner: '  (for the package runner)' } as const;

/** What the server may reach, beside its command: the consent step of `add`, `show`, `grant`. */
export function confinementLines(u: UpstreamView): string[] {
  const c = u.confinement;
  if (!c) return [];
  const state = { confined: 'confined', unconfined: 'UNCONFINED', unavailable: 'cannot be confined here (down)' }[
    c.state
  ];
  return [
    safe`  sandbox: ${state}${c.backend ? ` (${c.backend})` : ''}: ${c.why}`,
    ...(c.fix ? [safe`    to fix: ${c.fix}`] : []),
    ...(c.state === 'unconfined' ? [] : reachLines(c.grants, c.runner, c.private_home, '  ')),
  ];
}

/**
 * The same lines before anything exists (`clients import`'s consent): what
 * the service will store for this command line and these grants (the same
 * function), with the machine's answer still to come.
 */
export function plannedSandboxLines(
  command: string,
  args: readonly string[],
  input: SandboxGrantsInput | undefined,
  pad: string,
): string[] {
  const s = sandboxOf(command, args, input);
  if (s.unconfined)
    return [safe`${pad}sandbox: UNCONFINED (you asked for it): it will have all of your rights, files and network`];
  const r = runnerOf(command, args);
  return [
    safe`${pad}sandbox: confined (where this machine cannot confine, it stays down and says why)`,
    ...reachLines(s.grants, r ? { name: r.name, registry: r.registry } : null, null, pad),
  ];
}

function reachLines(
  grants: readonly SandboxGrant[],
  runner: UpstreamConfinement['runner'],
  privateHome: string | null,
  pad: string,
): string[] {
  const files = grants.filter((g) => g.kind !== 'net');
  const own = grants.filter((g) => g.kind === 'net' && g.from !== 'runner');
  const runnerNet = grants.filter((g) => g.kind === 'net' && g.from === 'runner');
  return [
    safe`${pad}  files: its runtime and package (read-only), its own HOME ${privateHome ?? ''}${privateHome ? ' ' : ''}and temp${files.length ? '' : '; nothing of yours'}`,
    ...files.map((g) => safe`${pad}    ${g.kind === 'write' ? 'read-write' : 'read-only'} ${g.value}${FROM[g.from]}`),
    ...(own.length
      ? [
          safe`${pad}  network: only through Gatehouse, to:`,
          ...own.map((g) => safe`${pad}    ${g.value}${FROM[g.from]}`),
        ]
      : [safe`${pad}  network: none${runnerNet.length ? ' of its own' : ''}`]),
    ...(runner
      ? [
          safe`${pad}  package runner: ${runner.name} (its own cache in its HOME), ${runnerNet.length ? `may reach ${runnerNet.map((g) => g.value).join(', ')} to fetch the package` : `no registry: only what its cache holds (grant --allow-net ${runner.registry})`}`,
        ]
      : []),
  ];
}
