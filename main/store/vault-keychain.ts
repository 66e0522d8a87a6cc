import { VAULT_SERVICE } from '../contract/paths.ts';
import { GatehouseError } from '../core/errors.ts';
import type { Vault } from '../core/ports/ports.ts';
import { redact } from '../lib/redact.ts';
import { checkAccount, checkSecret } from './vault-account.ts';

/**
 * The OS keychain through keytar: macOS Keychain, Windows Credential Manager,
 * or the Secret Service (gnome-keyring, KWallet) on Linux.
 *
 * keytar is a native module and is loaded lazily: a build without it, or a
 * machine without a reachable Secret Service, falls back to the file vault
 * instead of crashing at import. Against a missing D-Bus, libsecret can throw
 * or hang, so every call carries a timeout.
 */

/** The part of keytar we use; tests may pass their own. */
export interface KeychainClient {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
}

export type KeychainLoader = () => Promise<KeychainClient>;

export const loadKeytar: KeychainLoader = async () => {
  const mod = await import('keytar');
  const client: KeychainClient = mod.default ?? mod;
  if (typeof client.getPassword !== 'function') throw new Error('keytar has no getPassword');
  return client;
};

export function keychainStoreName(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return 'macOS Keychain';
  if (platform === 'win32') return 'Windows Credential Manager';
  return 'Secret Service';
}

const PROBE_ACCOUNT = '__gatehouse_probe__';
// Long enough for a person to answer an unlock prompt, short enough that a dead D-Bus does not look like a hang.
const OPERATION_TIMEOUT_MS = 30_000;

/**
 * Can we use the keychain? A read shows the service answers; a write and a
 * delete of a probe item show it can store (a Secret Service with no unlocked
 * collection answers reads with "nothing" but fails every write).
 */
export async function probeKeychain(
  client: KeychainClient,
  timeoutMs: number,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    await withTimeout(client.getPassword(VAULT_SERVICE, PROBE_ACCOUNT), timeoutMs, 'read');
    await withTimeout(client.setPassword(VAULT_SERVICE, PROBE_ACCOUNT, 'probe'), timeoutMs, 'write');
    await withTimeout(client.deletePassword(VAULT_SERVICE, PROBE_ACCOUNT), timeoutMs, 'delete');
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: describe(e) };
  }
}

export class KeychainVault implements Vault {
  readonly backend = 'keychain' as const;

  constructor(
    private readonly client: KeychainClient,
    private readonly timeoutMs: number = OPERATION_TIMEOUT_MS,
  ) {}

  async get(account: string): Promise<string | null> {
    checkAccount(account);
    return this.#call('read', account, () => this.client.getPassword(VAULT_SERVICE, account));
  }

  async set(account: string, secret: string): Promise<void> {
    checkAccount(account);
    checkSecret(secret);
    await this.#call('store', account, () => this.client.setPassword(VAULT_SERVICE, account, secret));
  }

  async delete(account: string): Promise<boolean> {
    checkAccount(account);
    return this.#call('delete', account, () => this.client.deletePassword(VAULT_SERVICE, account));
  }

  async #call<R>(what: string, account: string, fn: () => Promise<R>): Promise<R> {
    try {
      return await withTimeout(fn(), this.timeoutMs, what);
    } catch (e) {
      throw new GatehouseError(
        'vault_unavailable',
        `vault: the ${keychainStoreName()} could not ${what} "${account}": ${describe(e)}`,
      );
    }
  }
}

function withTimeout<R>(p: Promise<R>, ms: number, what: string): Promise<R> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(`no answer to a ${what} within ${Math.round(ms / 100) / 10} s (is it locked or not running?)`),
        ),
      ms,
    );
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** keytar's own messages come from the OS; they name services, never secrets, but redact anyway. */
function describe(e: unknown): string {
  return redact(e instanceof Error ? e.message : String(e));
}
