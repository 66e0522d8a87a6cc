import { GatehouseError } from '../core/errors.ts';

export const MAX_ACCOUNT_LENGTH = 200;
// Keychains cap an item; 64 KiB is far above any token or key we store.
export const MAX_SECRET_BYTES = 64 * 1024;

/** Account names are shown in messages, so they are checked here; they are names, never secrets. */
export function checkAccount(account: unknown): asserts account is string {
  if (typeof account !== 'string' || account.length === 0) {
    throw new GatehouseError('invalid_value', 'vault: the account name must be a non-empty string');
  }
  if (account.length > MAX_ACCOUNT_LENGTH) {
    throw new GatehouseError('invalid_value', `vault: the account name is ${account.length} characters long; at most ${MAX_ACCOUNT_LENGTH} are allowed`);
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(account)) {
    throw new GatehouseError('invalid_value', 'vault: the account name must not contain control characters');
  }
}

/** The secret itself never appears in these messages. */
export function checkSecret(secret: unknown): asserts secret is string {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new GatehouseError('invalid_value', 'vault: the secret must be a non-empty string (use delete to remove one)');
  }
  if (Buffer.byteLength(secret, 'utf8') > MAX_SECRET_BYTES) {
    throw new GatehouseError('invalid_value', `vault: the secret is longer than ${MAX_SECRET_BYTES} bytes`);
  }
}
