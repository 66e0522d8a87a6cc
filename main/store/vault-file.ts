import { chmod, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { GatehouseError } from '../core/errors.ts';
import type { Logger, Vault } from '../core/ports.ts';
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

const VaultDoc = z.object({
  version: z.literal(1),
  secrets: z.record(z.string(), z.string()),
});
type VaultDoc = z.infer<typeof VaultDoc>;

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
    const info = await stat(this.file).catch(() => null);
    if (info && (info.mode & 0o077) !== 0) {
      await chmod(this.file, 0o600);
      this.log.warn(`vault: ${this.file} was readable by other users (mode ${(info.mode & 0o777).toString(8)}); set it to 0600`);
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
      raw = await readFile(this.file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { version: 1, secrets: Object.create(null) as Record<string, string> };
      throw new GatehouseError('vault_unavailable', `vault: cannot read ${this.file} (${code ?? 'error'})`);
    }
    let parsed: ReturnType<typeof VaultDoc.safeParse> | null;
    try {
      parsed = VaultDoc.safeParse(JSON.parse(raw));
    } catch {
      parsed = null;
    }
    if (parsed?.success) return { version: 1, secrets: Object.assign(Object.create(null) as Record<string, string>, parsed.data.secrets) };
    // Keep what we cannot read for a person to recover; never overwrite it. Another process may have moved it already.
    const backup = await moveAside(this.file).catch(() => null);
    if (backup) this.log.error(`vault: ${this.file} was not a valid vault file; moved it to ${backup} and started an empty vault. Secrets stored before are in that file.`, { backup });
    return { version: 1, secrets: Object.create(null) as Record<string, string> };
  }
}
