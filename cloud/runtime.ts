import { mkdir, open, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { CloudError } from './errors.ts';

/**
 * `runtime.json` in the data dir says where a running service listens (as the
 * app's serve does), and `pgdata.lock` keeps a second process off an embedded
 * database it would corrupt. Both name a pid; a dead pid's file is stale.
 */
export const RUNTIME_FILE = 'runtime.json';
export const LOCK_FILE = 'pgdata.lock';

export const CloudRuntime = z.object({
  pid: z.number().int(),
  base_url: z.string(),
  database: z.enum(['pglite', 'postgres']),
  started_at: z.string(),
  /** unix socket for operator commands while the service holds the embedded database */
  operator_socket: z.string().nullable(),
  operator_token: z.string().nullable(),
});
export type CloudRuntime = z.infer<typeof CloudRuntime>;

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function writeRuntime(dataDir: string, info: CloudRuntime): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const tmp = join(dataDir, `${RUNTIME_FILE}.${process.pid}.tmp`);
  await writeFile(tmp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, join(dataDir, RUNTIME_FILE));
}

export async function readRuntime(dataDir: string): Promise<CloudRuntime | null> {
  try {
    const parsed = CloudRuntime.safeParse(JSON.parse(await readFile(join(dataDir, RUNTIME_FILE), 'utf8')));
    return parsed.success && pidAlive(parsed.data.pid) ? parsed.data : null;
  } catch {
    return null;
  }
}

export async function removeRuntime(dataDir: string): Promise<void> {
  const current = await readFile(join(dataDir, RUNTIME_FILE), 'utf8').catch(() => null);
  if (current && CloudRuntime.safeParse(JSON.parse(current)).data?.pid === process.pid)
    await unlink(join(dataDir, RUNTIME_FILE)).catch(() => {});
}

/** Takes the embedded database's lock for this process; answers the release. */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const h = await open(file, 'wx', 0o600);
      await h.writeFile(String(process.pid));
      await h.close();
      return async () => {
        const owner = Number(await readFile(file, 'utf8').catch(() => ''));
        if (owner === process.pid) await unlink(file).catch(() => {});
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = Number(await readFile(file, 'utf8').catch(() => 'NaN'));
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && pidAlive(owner)) {
        throw new CloudError(
          'conflict',
          `the embedded database in ${dataDir} is in use by process ${owner}: operator commands go through that service while it runs, or stop it first`,
          { pid: owner },
        );
      }
      // A crashed owner's lock: remove it and try again.
      await unlink(file).catch(() => {});
    }
  }
  throw new CloudError('conflict', `could not take the lock ${file}`);
}
