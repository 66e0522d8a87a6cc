import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CloudError } from '../errors.ts';

/**
 * The master key encrypts site secrets and the Ed25519 signing keys at rest
 * (AES-256-GCM). It comes from GATEHOUSE_CLOUD_MASTER_KEY (32 bytes as
 * base64, base64url or hex) or, when that is absent, from `master.key` in the
 * data dir, generated 0600 on first start. Several instances on one database
 * must share it: set the variable.
 */
export const MASTER_KEY_ENV = 'GATEHOUSE_CLOUD_MASTER_KEY';
export const MASTER_KEY_FILE = 'master.key';

export function parseMasterKey(text: string): Buffer {
  const t = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.length !== 32) throw new CloudError('invalid_request', `${MASTER_KEY_ENV} must be 32 bytes as hex (64 characters) or base64 (44 characters); the value given decodes to ${bytes.length} bytes`);
  return bytes;
}

export async function loadMasterKey(env: NodeJS.ProcessEnv, dataDir: string, warn: (msg: string, fields?: Record<string, unknown>) => void): Promise<SecretBox> {
  const fromEnv = env[MASTER_KEY_ENV];
  if (fromEnv) return new SecretBox(parseMasterKey(fromEnv));
  const file = join(dataDir, MASTER_KEY_FILE);
  try {
    return new SecretBox(parseMasterKey(await readFile(file, 'utf8')));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    // 'wx': a second instance starting at the same moment keeps the first one's key.
    await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return new SecretBox(parseMasterKey(await readFile(file, 'utf8')));
    throw e;
  }
  await chmod(file, 0o600);
  warn(`${MASTER_KEY_ENV} is not set: generated a master key in the data dir. Back it up, or set the variable (required for several instances on one database)`, { file });
  return new SecretBox(key);
}

const VERSION = 'v1';

/** AES-256-GCM with a context string as associated data, so a ciphertext only opens for the row it was made for. */
export class SecretBox {
  constructor(private readonly key: Buffer) {}

  seal(plain: string | Buffer, context: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(Buffer.from(context));
    const body = Buffer.concat([c.update(typeof plain === 'string' ? Buffer.from(plain) : plain), c.final()]);
    return `${VERSION}.${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64url')}`;
  }

  open(sealed: string, context: string): Buffer {
    const [v, data] = sealed.split('.');
    if (v !== VERSION || !data) throw new CloudError('internal_error', 'a stored secret has an unknown format');
    const raw = Buffer.from(data, 'base64url');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    d.setAAD(Buffer.from(context));
    d.setAuthTag(raw.subarray(12, 28));
    try {
      return Buffer.concat([d.update(raw.subarray(28)), d.final()]);
    } catch {
      throw new CloudError('internal_error', 'a stored secret does not open with this master key');
    }
  }

  /** A key for one purpose, derived from the master key (every instance of a deployment derives the same one). */
  derive(purpose: string): Buffer {
    return createHmac('sha256', this.key).update(`gatehouse-cloud derive v1: ${purpose}`).digest();
  }

  /** A value that tells whether this key is the one the database was set up with, without revealing it. */
  checkValue(): string {
    return createHmac('sha256', this.key).update('gatehouse-cloud master key check v1').digest('base64url');
  }
}
