import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CloudError } from '../errors.ts';

/**
 * The master key encrypts site secrets and the Ed25519 signing keys at rest
 * (AES-256-GCM). It comes from GATEHOUSE_CLOUD_MASTER_KEY (32 bytes as
 * base64, base64url or hex) or, when that is absent, from `master.key` in the
 * data dir, generated 0600 on a database's first start; the database keeps
 * a check value of it and where it was. Several instances on one database
 * must share it: set the variable.
 */
export const MASTER_KEY_ENV = 'GATEHOUSE_CLOUD_MASTER_KEY';
export const MASTER_KEY_FILE = 'master.key';

export function parseMasterKey(text: string): Buffer {
  const t = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(t)
    ? Buffer.from(t, 'hex')
    : Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.length !== 32)
    throw new CloudError(
      'invalid_request',
      `${MASTER_KEY_ENV} must be 32 bytes as hex (64 characters) or base64 (44 characters); the value given decodes to ${bytes.length} bytes`,
    );
  return bytes;
}

/** Where the database's master key came from when it was set up (kept in cloud_settings; not a secret). */
export type KeySource = { kind: 'env' } | { kind: 'file'; path: string };

export interface KeyRecord {
  /** SecretBox.checkValue() of the key the database was set up with; null: a new database */
  check: string | null;
  source: KeySource | null;
}

export interface KeyStore {
  record(): Promise<KeyRecord>;
  /** Stores the check and source unless some are there; answers the check that is there after. */
  claim(check: string, source: KeySource): Promise<string>;
  /** Records where the key is, for a database set up before that was recorded. */
  noteSource(source: KeySource): Promise<void>;
}

const describe = (s: KeySource) => (s.kind === 'env' ? MASTER_KEY_ENV : s.path);
const readKeyFile = async (path: string) => new SecretBox(parseMasterKey(await readFile(path, 'utf8')));
const exists = (path: string) =>
  readFile(path, 'utf8').then(
    () => true,
    (e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? false : Promise.reject(e)),
  );

function howToPass(record: KeyRecord): string {
  if (record.source?.kind === 'file')
    return `it is in ${record.source.path} (the data dir serve used): pass --data-dir ${dirname(record.source.path)} or set ${MASTER_KEY_ENV} to the contents of that file`;
  if (record.source?.kind === 'env')
    return `it was given in ${MASTER_KEY_ENV} when the database was set up: set the variable to that key`;
  return `set ${MASTER_KEY_ENV} to the key serve uses, or pass --data-dir with the data dir serve uses (its master.key)`;
}

/**
 * The master key for a database, found rather than made whenever the
 * database already has one: GATEHOUSE_CLOUD_MASTER_KEY, else `master.key` in
 * the data dir, else the file the database was set up with (a PostgreSQL
 * operator command run from another directory finds serve's key). A new key
 * is generated only for a database that has none yet (never a stray
 * master.key next to a database that has one), and a key that is not the
 * database's is one clear error saying where the right one is.
 */
export async function loadMasterKey(
  env: NodeJS.ProcessEnv,
  dataDir: string,
  store: KeyStore,
  warn: (msg: string, fields?: Record<string, unknown>) => void,
): Promise<SecretBox> {
  const record = await store.record();
  const local = resolve(dataDir, MASTER_KEY_FILE);
  let found: { box: SecretBox; source: KeySource } | null = null;
  const fromEnv = env[MASTER_KEY_ENV];
  if (fromEnv) found = { box: new SecretBox(parseMasterKey(fromEnv)), source: { kind: 'env' } };
  else if (await exists(local)) found = { box: await readKeyFile(local), source: { kind: 'file', path: local } };
  else if (record.check && record.source?.kind === 'file' && (await exists(record.source.path)))
    found = { box: await readKeyFile(record.source.path), source: record.source };
  if (!found) {
    if (record.check)
      throw new CloudError(
        'invalid_request',
        `this database was set up with a master key that is not here: ${howToPass(record)}`,
        { master_key: record.source ? describe(record.source) : null },
      );
    return generate(local, store, warn);
  }
  const check = record.check ?? (await store.claim(found.box.checkValue(), found.source));
  if (check !== found.box.checkValue()) {
    throw new CloudError(
      'invalid_request',
      `the master key from ${describe(found.source)} is not the one this database was set up with: ${howToPass(record)}`,
      { master_key: record.source ? describe(record.source) : null },
    );
  }
  // A database set up before its key's place was recorded learns it now.
  if (record.check && !record.source) await store.noteSource(found.source);
  return found.box;
}

async function generate(
  file: string,
  store: KeyStore,
  warn: (msg: string, fields?: Record<string, unknown>) => void,
): Promise<SecretBox> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  // 'wx': a second process starting at the same moment in this data dir keeps the first one's key.
  await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  const box = new SecretBox(key);
  if ((await store.claim(box.checkValue(), { kind: 'file', path: file })) !== box.checkValue()) {
    // Another instance set the database up at the same moment with its own key: ours is of no use, leave nothing behind.
    await unlink(file).catch(() => {});
    throw new CloudError(
      'conflict',
      `another gatehouse-cloud set this database up at the same moment with its own master key: start again with ${MASTER_KEY_ENV} set to that key (several instances on one database must share it)`,
    );
  }
  warn(
    `${MASTER_KEY_ENV} is not set: generated a master key in the data dir. Back it up, or set the variable (required for several instances on one database)`,
    { file },
  );
  return box;
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
