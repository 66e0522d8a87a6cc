import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { CLIENT_IDS } from '../contract/client-locations.ts';
import { GatehouseError } from '../core/errors.ts';
import { ensurePrivateDir, writeFileAtomic } from '../store/atomic-write.ts';
import { withFileMutex } from '../store/file-mutex.ts';
import { lazySchema } from '../contract/lazy-schema.ts';

/**
 * What `gatehouse clients` remembers in the data dir (`clients.json`, 0600):
 * which client entry became which upstream (names and hashes only: the
 * entries' secrets went to the vault), and for each `connect` the backup of
 * the file as it was, the hash of the file as connect left it, and what it
 * changed, so `restore` can tell whether the client rewrote the file since.
 * Backups live in `client-backups/` (0700 folder, 0600 files): they hold the
 * client's original entries, secrets included, exactly as the client had them.
 */

const Scope = lazySchema(() => z.enum(['user', 'local', 'project', 'managed']));
const ImportRecord = lazySchema(() =>
  z.object({
    client: z.enum(CLIENT_IDS),
    scope: Scope,
    file: z.string(),
    path: z.array(z.string()),
    name: z.string(),
    upstream: z.string(),
    at: z.string(),
  }),
);
export type ImportRecord = z.infer<typeof ImportRecord>;

const ConnectRecord = lazySchema(() =>
  z.object({
    client: z.enum(CLIENT_IDS),
    /** the file as the client names it, and the file written (a symlink's target) */
    file: z.string(),
    real: z.string(),
    format: z.enum(['jsonc', 'toml']),
    backup: z.string(),
    /** the bytes as connect left them: equal at restore means nobody changed the file since */
    hash_after: z.string(),
    /** where Gatehouse's entry went, and the hash of the entry (it holds a token: never the entry itself) */
    entry_name: z.string(),
    entry_hash: z.string(),
    /** the servers object of each place that got the entry, and the names taken out of it */
    places: z.array(z.object({ path: z.array(z.string()), removed: z.array(z.string()) })),
    token_id: z.string().nullable(),
    at: z.string(),
  }),
);
export type ConnectRecord = z.infer<typeof ConnectRecord>;

const State = lazySchema(() =>
  z.object({
    imports: z.array(ImportRecord).default([]),
    connections: z.array(ConnectRecord).default([]),
  }),
);
export type ClientsState = z.infer<typeof State>;

export const stateFile = (dataDir: string) => join(dataDir, 'clients.json');
export const backupDir = (dataDir: string) => join(dataDir, 'client-backups');

export async function readState(dataDir: string): Promise<ClientsState> {
  let text: string;
  try {
    text = await readFile(stateFile(dataDir), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { imports: [], connections: [] };
    throw e;
  }
  const parsed = State.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new GatehouseError('invalid_value', `${stateFile(dataDir)} is damaged; move it aside to start over`);
  return parsed.data;
}

/** A read-modify-write of clients.json under a lock (two CLI commands may run at once). */
export async function updateState<R>(dataDir: string, fn: (s: ClientsState) => R | Promise<R>): Promise<R> {
  await ensurePrivateDir(dataDir);
  return withFileMutex(`${stateFile(dataDir)}.lock`, async () => {
    const state = await readState(dataDir);
    const r = await fn(state);
    await writeFileAtomic(stateFile(dataDir), `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    return r;
  });
}

/** Keeps a copy of the file's bytes as connect found them; returns its path. */
export async function writeBackup(dataDir: string, client: string, bytes: string, now: Date): Promise<string> {
  const dir = backupDir(dataDir);
  await ensurePrivateDir(dir);
  const stamp = now.toISOString().replace(/[-:.]/g, '');
  const file = join(dir, `${client}-${stamp}-${Math.random().toString(36).slice(2, 8)}.bak`);
  await writeFileAtomic(file, bytes, { mode: 0o600 });
  return file;
}
