import type { UpstreamView } from '../contract/upstreams.ts';
import { safe, UsageError } from './output.ts';

/** The process flags of `upstreams add --stdio` and `upstreams process` (docs/upstreams.md, "One process per client"). */
export const processFlags = {
  'per-client': { type: 'boolean' },
  shared: { type: 'boolean' },
  'max-processes': { type: 'string' },
  'idle-minutes': { type: 'string' },
} as const;

const whole = (raw: unknown, flag: string): number => {
  const n = Number(raw);
  if (!/^\d+$/.test(String(raw)) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${flag} takes a whole number above 0 (got ${JSON.stringify(String(raw)).slice(0, 40)})`);
  return n;
};

/** `{process: {...}}` when a process flag was given, else nothing (shared, the default). `required`: `upstreams process` must say which. */
export function processInput(values: Record<string, unknown>, required = false): { process?: Record<string, unknown> } {
  const bounds = values['max-processes'] !== undefined || values['idle-minutes'] !== undefined;
  if (values['per-client'] && values.shared) throw new UsageError('--per-client and --shared: choose one');
  if (!values['per-client'] && !values.shared) {
    if (bounds) throw new UsageError('--max-processes and --idle-minutes go with --per-client');
    if (required) throw new UsageError('upstreams process ID needs --per-client or --shared');
    return {};
  }
  if (values.shared && bounds) throw new UsageError('--max-processes and --idle-minutes go with --per-client');
  return {
    process: {
      mode: values.shared ? 'shared' : 'per-client',
      ...(values['max-processes'] !== undefined ? { max: whole(values['max-processes'], '--max-processes') } : {}),
      ...(values['idle-minutes'] !== undefined
        ? { idle_ms: whole(values['idle-minutes'], '--idle-minutes') * 60_000 }
        : {}),
    },
  };
}

/** How its processes run, and the suggestion for a known stateful server that shares one: `add`, `show`, `process`. */
export function processLines(u: UpstreamView): string[] {
  const p = u.process;
  if (!p) return [];
  if (p.mode === 'shared')
    return [
      safe`  processes: one, shared by every client`,
      ...(p.suggestion ? [safe`  suggested: ${p.suggestion}: gatehouse upstreams process ${u.id} --per-client`] : []),
    ];
  return [
    safe`  processes: one per client token, at most ${p.max} at once, each stopped after ${Math.round(p.idle_ms / 60_000)} min without a call; ${p.running} running`,
  ];
}
