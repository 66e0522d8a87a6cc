import type { ParseArgsConfig } from 'node:util';
import { parseFlags, UsageError } from '../../main/lib/cli-kit.ts';
import { homedir } from 'node:os';
import { join } from 'node:path';

export { UsageError };

/** Flags every command takes. */
const COMMON = {
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  'log-level': { type: 'string' },
  'releases-dir': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

export function parse<O extends ParseArgsConfig['options']>(args: string[], options: O) {
  return parseFlags(args, COMMON, options);
}

/** --data-dir, then GATEHOUSE_CLOUD_DATA_DIR, then $XDG_DATA_HOME/gatehouse-cloud (~/.local/share/gatehouse-cloud). */
export function resolveCloudDataDir(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  return (
    flag ||
    env.GATEHOUSE_CLOUD_DATA_DIR ||
    join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'gatehouse-cloud')
  );
}

/** --database-url, then DATABASE_URL; none: the embedded database. */
export function resolveDatabaseUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const url = flag || env.DATABASE_URL || undefined;
  if (url !== undefined && !/^postgres(ql)?:\/\//.test(url))
    throw new UsageError('--database-url / DATABASE_URL must be a postgres:// or postgresql:// URL');
  return url;
}

export function intFlag(name: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got '${v}')`);
  return n;
}

export const list = (v: string | undefined): string[] | undefined =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export function logLevel(v: string | undefined, fallback: LogLevel): LogLevel {
  if (v === undefined) return fallback;
  if (v === 'debug' || v === 'info' || v === 'warn' || v === 'error') return v;
  throw new UsageError(`--log-level must be debug, info, warn or error (got '${v}')`);
}

export const out = (json: boolean, data: unknown, human: () => string) =>
  process.stdout.write(`${json ? JSON.stringify(data, null, 2) : human()}\n`);

export { table } from '../../main/lib/text-table.ts';
