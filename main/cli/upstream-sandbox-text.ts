import type { UpstreamView } from '../contract/upstreams.ts';
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
  const files = c.grants.filter((g) => g.kind !== 'net');
  const own = c.grants.filter((g) => g.kind === 'net' && g.from !== 'runner');
  const runnerNet = c.grants.filter((g) => g.kind === 'net' && g.from === 'runner');
  return [
    safe`  sandbox: ${state}${c.backend ? ` (${c.backend})` : ''}: ${c.why}`,
    ...(c.fix ? [safe`    to fix: ${c.fix}`] : []),
    ...(c.state === 'unconfined'
      ? []
      : [
          safe`    files: its runtime and package (read-only), its own HOME ${c.private_home ?? ''} and temp${files.length ? '' : '; nothing of yours'}`,
          ...files.map((g) => safe`      ${g.kind === 'write' ? 'read-write' : 'read-only'} ${g.value}${FROM[g.from]}`),
          ...(own.length
            ? [safe`    network: only through Gatehouse, to:`, ...own.map((g) => safe`      ${g.value}${FROM[g.from]}`)]
            : [safe`    network: none${runnerNet.length ? ' of its own' : ''}`]),
          ...(c.runner
            ? [
                safe`    package runner: ${c.runner.name} (its own cache in its HOME), ${runnerNet.length ? `may reach ${runnerNet.map((g) => g.value).join(', ')} to fetch the package` : `no registry: only what its cache holds (grant --allow-net ${c.runner.registry})`}`,
              ]
            : []),
        ]),
  ];
}
