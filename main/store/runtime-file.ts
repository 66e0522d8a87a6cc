import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { RUNTIME_FILE } from '../contract/paths.ts';
import { RuntimeInfo } from '../contract/health.ts';
import { GatehouseError } from '../core/errors.ts';
import { ensurePrivateDir, writeFileAtomic } from './atomic-write.ts';
import { isPidAlive } from './pid-alive.ts';
import { describeIssues } from './zod-issues.ts';

/**
 * `runtime.json` tells the CLI and the bridge where a running service listens.
 * It is advisory: the process lock decides who owns the store, and a file left
 * by a crashed service reads as absent because its pid is gone.
 */

export function runtimeFilePath(dataDir: string): string {
  return join(dataDir, RUNTIME_FILE);
}

export async function writeRuntime(dataDir: string, info: RuntimeInfo): Promise<void> {
  const parsed = RuntimeInfo.safeParse(info);
  if (!parsed.success)
    throw new GatehouseError('invalid_value', `invalid runtime info: ${describeIssues(parsed.error).text}`);
  await ensurePrivateDir(dataDir);
  await writeFileAtomic(runtimeFilePath(dataDir), `${JSON.stringify(parsed.data, null, 2)}\n`, { mode: 0o600 });
}

/** The running service's addresses, or null when none is running (absent, unreadable, invalid, or its pid is gone). */
export async function readRuntime(dataDir: string): Promise<RuntimeInfo | null> {
  let raw: string;
  try {
    raw = await readFile(runtimeFilePath(dataDir), 'utf8');
  } catch {
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  const parsed = RuntimeInfo.safeParse(json);
  if (!parsed.success || !isPidAlive(parsed.data.pid)) return null;
  return parsed.data;
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
  const parsed = RuntimeInfo.safeParse(current);
  if (!parsed.success || parsed.data.pid !== pid) return false;
  try {
    await unlink(file);
    return true;
  } catch {
    return false;
  }
}
