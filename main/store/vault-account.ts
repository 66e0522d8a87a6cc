import { GatehouseError } from '../core/errors.ts';
import type { ClientTokenVault, Vault } from '../core/ports/ports.ts';
import { KEYCHAIN_NAME } from '../contract/paths.ts';

/**
 * The one place that knows vault account names. The service's own secrets
 * (the admin key) and the accounts clients may write (`tokens create
 * --keychain NAME`) live in separate namespaces, so no client-chosen name can
 * reach a service account: NAME is stored as `client-token/NAME`.
 */
export const ADMIN_KEY_ACCOUNT = 'admin-api-key';
const CLIENT_TOKEN_NAMESPACE = 'client-token/';
/** Accounts the service itself owns; never read or written on a client's behalf. */
const SERVICE_ACCOUNTS: ReadonlySet<string> = new Set([ADMIN_KEY_ACCOUNT]);

/** Where an upstream's env and header values are kept (JSON); no client-chosen name reaches this namespace. */
export const upstreamSecretsAccount = (upstreamId: string): string => `upstream-secrets/${upstreamId}`;

/** Where the secret of an OAuth upstream's pre-registered (confidential) client is kept (docs/oauth.md). */
export const upstreamOAuthSecretAccount = (upstreamId: string): string => `upstream-oauth-secret/${upstreamId}`;

/** The vault account for a client token saved under `name`. */
export function clientTokenAccount(name: string): string {
  if (!KEYCHAIN_NAME.test(name))
    throw new GatehouseError(
      'invalid_value',
      `a keychain name is 1-100 letters, digits, . _ - starting with a letter or digit (got '${name.slice(0, 100)}')`,
    );
  return CLIENT_TOKEN_NAMESPACE + name;
}

/**
 * Accounts where the bridge looks for the token named `name`: the client
 * namespace first, then (for tokens saved before namespacing) the bare name,
 * unless that is one of the service's own accounts.
 */
export function clientTokenLookup(name: string): string[] {
  const accounts = KEYCHAIN_NAME.test(name) ? [CLIENT_TOKEN_NAMESPACE + name] : [];
  if (!SERVICE_ACCOUNTS.has(name)) accounts.push(name);
  return accounts;
}

/** The vault as the core's ClientTokenVault port: writes only inside the client namespace. */
export function clientTokenVault(vault: Vault): ClientTokenVault {
  return { backend: vault.backend, save: (name, token) => vault.set(clientTokenAccount(name), token) };
}

export const MAX_ACCOUNT_LENGTH = 200;
// Keychains cap an item; 64 KiB is far above any token or key we store.
export const MAX_SECRET_BYTES = 64 * 1024;

/** Account names are shown in messages, so they are checked here; they are names, never secrets. */
export function checkAccount(account: unknown): asserts account is string {
  if (typeof account !== 'string' || account.length === 0) {
    throw new GatehouseError('invalid_value', 'vault: the account name must be a non-empty string');
  }
  if (account.length > MAX_ACCOUNT_LENGTH) {
    throw new GatehouseError(
      'invalid_value',
      `vault: the account name is ${account.length} characters long; at most ${MAX_ACCOUNT_LENGTH} are allowed`,
    );
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(account)) {
    throw new GatehouseError('invalid_value', 'vault: the account name must not contain control characters');
  }
}

/** The secret itself never appears in these messages. */
export function checkSecret(secret: unknown): asserts secret is string {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new GatehouseError(
      'invalid_value',
      'vault: the secret must be a non-empty string (use delete to remove one)',
    );
  }
  if (Buffer.byteLength(secret, 'utf8') > MAX_SECRET_BYTES) {
    throw new GatehouseError('invalid_value', `vault: the secret is longer than ${MAX_SECRET_BYTES} bytes`);
  }
}
