import { GatehouseError } from '../core/errors.ts';
import type { Vault } from '../core/ports/ports.ts';
import type { Logger } from '../lib/logger.ts';
import { createLogger } from '../lib/logger.ts';
import { FileVault } from './vault-file.ts';
// The bridge loads this module lazily; it finds client token accounts through it.
export { clientTokenLookup } from './vault-account.ts';
import type { KeychainLoader } from './vault-keychain.ts';
import { KeychainVault, keychainStoreName, loadKeytar, probeKeychain } from './vault-keychain.ts';

/**
 * Picks where secrets live. `auto` (the default) uses the OS keychain when it
 * answers and can store, and otherwise a 0600 file in the data dir, with one
 * warning saying so. `keychain` insists (vault_unavailable when it is not
 * there); `file` skips the keychain (headless machines, tests).
 */

export type VaultChoice = 'auto' | 'keychain' | 'file';
export type LabelledVault = Vault & { readonly label: string };

export const FILE_VAULT_LABEL = 'file (not encrypted)';
const PROBE_TIMEOUT_MS = 3_000;
// One warning per vault file per process, however often a process opens it.
const warnedFor = new Set<string>();

export interface OpenVaultOptions {
  dataDir: string;
  backend?: VaultChoice;
  log?: Logger;
  /** Test seam: how keytar is loaded (default: dynamic import of 'keytar'). */
  loadKeychain?: KeychainLoader;
  /** Test seam: how long the keychain probe waits per call (default 3 s). */
  probeTimeoutMs?: number;
  /**
   * Warn when falling back to the file vault (default true). The service and
   * its health report say it; a one-off CLI command does not repeat it each time.
   */
  warnFileVault?: boolean;
}

export async function openVault(opts: OpenVaultOptions): Promise<LabelledVault> {
  const choice = opts.backend ?? 'auto';
  const log = opts.log ?? createLogger();

  if (choice !== 'file') {
    const reached = await reachKeychain(opts.loadKeychain ?? loadKeytar, opts.probeTimeoutMs ?? PROBE_TIMEOUT_MS);
    if (reached.ok) return labelled(new KeychainVault(reached.client), `keychain (${keychainStoreName()})`);
    if (choice === 'keychain') {
      throw new GatehouseError(
        'vault_unavailable',
        `vault: the ${keychainStoreName()} is not reachable (${reached.reason}). Start or unlock it, or choose the file vault.`,
      );
    }
    const vault = await openFileVault(opts.dataDir, log);
    if (opts.warnFileVault !== false && !warnedFor.has(vault.file)) {
      warnedFor.add(vault.file);
      log.warn(
        `vault: file (not encrypted) at ${vault.file}, readable only by this OS user: the ${keychainStoreName()} is not reachable (${reached.reason})`,
        {
          backend: 'file',
        },
      );
    }
    return labelled(vault, FILE_VAULT_LABEL);
  }
  return labelled(await openFileVault(opts.dataDir, log), FILE_VAULT_LABEL);
}

async function reachKeychain(
  load: KeychainLoader,
  timeoutMs: number,
): Promise<{ ok: true; client: Awaited<ReturnType<KeychainLoader>> } | { ok: false; reason: string }> {
  let client;
  try {
    client = await load();
  } catch (e) {
    return {
      ok: false,
      reason: `keytar could not be loaded: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`,
    };
  }
  const probe = await probeKeychain(client, timeoutMs);
  return probe.ok ? { ok: true, client } : probe;
}

async function openFileVault(dataDir: string, log: Logger): Promise<FileVault> {
  const vault = new FileVault(dataDir, log);
  await vault.init();
  return vault;
}

/** Wraps instead of mutating the instance, so `label` sits beside the Vault methods. */
function labelled(vault: Vault, label: string): LabelledVault {
  return {
    backend: vault.backend,
    label,
    get: (account) => vault.get(account),
    set: (account, secret) => vault.set(account, secret),
    delete: (account) => vault.delete(account),
  };
}
