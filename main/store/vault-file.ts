import { readFileSync, statSync, type Stats } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { GatehouseError } from '../core/errors.ts';
import type { Vault } from '../core/ports/ports.ts';
import type { Logger } from '../lib/logger.ts';
import { ensurePrivateDir, writeFileAtomic } from './atomic-write.ts';
import { moveAside } from './corrupt-backup.ts';
import { withFileMutex } from './file-mutex.ts';
import { checkAccount, checkSecret } from './vault-account.ts';

/**
 * The fallback vault: `vault.json` in the data dir, readable by this OS user
 * only (0600, created that way from its first byte). Not encrypted: anyone who
 * can read the user's files can read it, which is why the keychain comes first
 * and the console says which one is in use.
 *
 * The service, the CLI and the bridge share the file, so every read goes to
 * disk and every change is a locked read-modify-write with an atomic replace.
 */

export const VAULT_FILE = 'vault.json';

type VaultDoc = { version: 1; secrets: Record<string, string> };

/**
 * Checked by hand: a schema library rebuilds records on a plain object, where an account named "__proto__" would
 * vanish, and the CLI opens this file before every command it sends a running service (no schema is loaded on that
 * path, main/cli/admin-client.ts). The secrets live in an object with no prototype, so every account name is just a key.
 */
function parseVaultDoc(raw: string): VaultDoc | null {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isPlainObject(json) || json.version !== 1 || !isPlainObject(json.secrets)) return null;
  const secrets = Object.create(null) as Record<string, string>;
  for (const [k, v] of Object.entries(json.secrets)) {
    if (typeof v !== 'string') return null;
    secrets[k] = v;
  }
  return { version: 1, secrets };
}

/** Its mode, or null when it cannot be asked (absent, or a folder this user may not read): the read that follows says which. */
function statOrNull(file: string): Stats | null {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const queues = new Map<string, Promise<unknown>>();

export class FileVault implements Vault {
  readonly backend = 'file' as const;
  readonly file: string;

  constructor(
    readonly dataDir: string,
    private readonly log: Logger,
  ) {
    this.file = join(dataDir, VAULT_FILE);
  }

  /** Creates the folder, and tightens a vault file someone loosened (e.g. copied with 0644). */
  async init(): Promise<void> {
    await ensurePrivateDir(this.dataDir);
    if (process.platform === 'win32') return;
    const info = statOrNull(this.file);
    if (info && (info.mode & 0o077) !== 0) {
      await chmod(this.file, 0o600);
      this.log.warn(
        `vault: ${this.file} was readable by other users (mode ${(info.mode & 0o777).toString(8)}); set it to 0600`,
      );
    }
  }

  async get(account: string): Promise<string | null> {
    checkAccount(account);
    const doc = await this.#load();
    return Object.hasOwn(doc.secrets, account) ? (doc.secrets[account] ?? null) : null;
  }

  async set(account: string, secret: string): Promise<void> {
    checkAccount(account);
    checkSecret(secret);
    await this.#change((doc) => {
      doc.secrets[account] = secret;
      return true;
    });
  }

  async delete(account: string): Promise<boolean> {
    checkAccount(account);
    return this.#change((doc) => {
      if (!Object.hasOwn(doc.secrets, account)) return false;
      delete doc.secrets[account];
      return true;
    });
  }

  async #change(fn: (doc: VaultDoc) => boolean): Promise<boolean> {
    // Queue changes within this process first, so the cross-process mutex only ever sees one of ours.
    const prev = queues.get(this.file) ?? Promise.resolve();
    const run = prev.then(() => this.#changeLocked(fn));
    const tail = run.catch(() => undefined);
    queues.set(this.file, tail);
    void tail.then(() => {
      if (queues.get(this.file) === tail) queues.delete(this.file);
    });
    return run;
  }

  async #changeLocked(fn: (doc: VaultDoc) => boolean): Promise<boolean> {
    try {
      return await withFileMutex(`${this.file}.lock`, async () => {
        const doc = await this.#load();
        const changed = fn(doc);
        if (changed) await writeFileAtomic(this.file, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o600 });
        return changed;
      });
    } catch (e) {
      if (e instanceof GatehouseError) throw e;
      throw new GatehouseError('vault_unavailable', `vault: could not write ${this.file}: ${(e as Error).message}`);
    }
  }

  async #load(): Promise<VaultDoc> {
    let raw: string;
    try {
      // Synchronous: a file of a few kilobytes at most, read before every command the CLI sends a running service,
      // where the promise API of node:fs would cost about a millisecond to load. The service reads it too (an OAuth
      // upstream's tokens, at each of its requests): one read of a small local file, which the promise API would
      // have spread over four trips through the thread pool.
      raw = readFileSync(this.file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { version: 1, secrets: Object.create(null) as Record<string, string> };
      throw new GatehouseError('vault_unavailable', `vault: cannot read ${this.file} (${code ?? 'error'})`);
    }
    const doc = parseVaultDoc(raw);
    if (doc) return doc;
    // Keep what we cannot read for a person to recover; never overwrite it. Another process may have moved it already.
    const backup = await moveAside(this.file).catch(() => null);
    if (backup)
      this.log.error(
        `vault: ${this.file} was not a valid vault file; moved it to ${backup} and started an empty vault. Secrets stored before are in that file.`,
        { backup },
      );
    return { version: 1, secrets: Object.create(null) as Record<string, string> };
  }
}
