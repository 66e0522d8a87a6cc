import { readFileSync } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { RUNTIME_FILE } from '../contract/paths.ts';
import type { RuntimeInfo } from '../contract/health.ts';
import { GatehouseError } from '../core/errors.ts';
import { ensurePrivateDir, writeFileAtomic } from './atomic-write.ts';
import { isPidAlive } from './pid-alive.ts';

/**
 * `runtime.json` tells the CLI and the bridge where a running service listens.
 * It is advisory: the process lock decides who owns the store, and a file left
 * by a crashed service reads as absent because its pid is gone.
 */

const TEXT_FIELDS = ['base_url', 'mcp_url', 'console_url', 'admin_url', 'version', 'started'] as const;

/**
 * RuntimeInfo (main/contract/health.ts) checked by hand, with only its own fields: every CLI command reads this file
 * first, and one sent to a running service loads no schema (main/cli/admin-client.ts).
 */
export function runtimeInfoOf(v: unknown): RuntimeInfo | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if (typeof o.pid !== 'number' || !Number.isSafeInteger(o.pid)) return null;
  const info: Record<string, unknown> = { pid: o.pid };
  for (const k of TEXT_FIELDS) {
    if (typeof o[k] !== 'string') return null;
    info[k] = o[k];
  }
  return info as RuntimeInfo;
}

export function runtimeFilePath(dataDir: string): string {
  return join(dataDir, RUNTIME_FILE);
}

export async function writeRuntime(dataDir: string, info: RuntimeInfo): Promise<void> {
  const checked = runtimeInfoOf(info);
  if (!checked)
    throw new GatehouseError(
      'invalid_value',
      `invalid runtime info: it needs a whole-number pid and ${TEXT_FIELDS.join(', ')} as text`,
    );
  await ensurePrivateDir(dataDir);
  await writeFileAtomic(runtimeFilePath(dataDir), `${JSON.stringify(checked, null, 2)}\n`, { mode: 0o600 });
}

/**
 * The running service's addresses, or null when none is running (absent, unreadable, invalid, or its pid is gone).
 * Read synchronously: a file of some 300 bytes, and every CLI command reads it first, where loading the promise
 * API of node:fs would be about a millisecond of a ~30 ms command (docs/performance.md "Start-up").
 */
export async function readRuntime(dataDir: string): Promise<RuntimeInfo | null> {
  let raw: string;
  try {
    raw = readFileSync(runtimeFilePath(dataDir), 'utf8');
  } catch {
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  const info = runtimeInfoOf(json);
  return info && isPidAlive(info.pid) ? info : null;
}

/** Removes runtime.json if it still names `pid`: a newer service's file is left alone. */
export async function removeRuntime(dataDir: string, pid: number): Promise<boolean> {
  const file = runtimeFilePath(dataDir);
  let current: unknown;
  try {
    current = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return false;
  }
  if (runtimeInfoOf(current)?.pid !== pid) return false;
  try {
    await unlink(file);
    return true;
  } catch {
    return false;
  }
}
