import type { ParseArgsConfig } from 'node:util';
import { homedir } from 'node:os';
import { dataDirProblem, resolveDataDir } from '../contract/paths.ts';
import { createLogger } from '../lib/logger.ts';
import type { VaultChoice } from '../store/vault.ts';
import { connect, type Connection } from './connect.ts';
import { parseFlags } from '../lib/cli-kit.ts';
import { UsageError } from './output.ts';

/** Flags every command takes. */
const COMMON = {
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  vault: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  'log-level': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

export function parse<O extends ParseArgsConfig['options']>(args: string[], options: O) {
  return parseFlags(args, COMMON, options);
}

/** Prints data: JSON with --json, else the human form. */
export const out = (json: boolean, data: unknown, human: () => string) =>
  process.stdout.write(`${json ? JSON.stringify(data, null, 2) : human()}\n`);

export function vaultChoice(v: unknown): VaultChoice {
  if (v === undefined) return 'auto';
  if (v === 'auto' || v === 'keychain' || v === 'file') return v;
  throw new UsageError(`--vault must be auto, keychain or file (got '${String(v)}')`);
}

/** A comma-separated flag value as a list. */
export const list = (v: unknown) =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

/** The data dir for this command; an empty --data-dir is bad usage, never the default profile. */
export function dataDirOf(values: { 'data-dir'?: string | boolean }): string {
  const flag = values['data-dir'] as string | undefined;
  const problem = dataDirProblem(flag);
  if (problem) throw new UsageError(problem);
  return resolveDataDir(flag, process.platform, process.env, homedir());
}

/** Runs `fn` against the running service, or on the files under the lock when none runs. */
export async function withConnection<T>(
  values: { 'data-dir'?: string | boolean; vault?: string | boolean; 'log-level'?: string | boolean },
  fn: (c: Connection) => Promise<T>,
): Promise<T> {
  const dataDir = dataDirOf(values);
  const c = await connect(
    dataDir,
    vaultChoice(values.vault),
    createLogger({ level: (values['log-level'] as 'warn') ?? 'warn' }),
  );
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}
