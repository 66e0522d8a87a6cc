import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { ReleaseFileName } from '../../main/contract/cloud/index.ts';
import { CloudError } from '../errors.ts';
import type { FileDigest } from './file-hash.ts';

/**
 * Release files on disk: `<root>/<product>/<channel>/<version>/<name>`. A
 * file is copied to a temporary name and hashed on the way, then renamed,
 * so a reader never sees half a file and the digest is of the bytes stored.
 * Several instances of one deployment share the root (a network folder).
 */
export const releasePath = (root: string, product: string, channel: string, version: string, name: string): string =>
  join(root, product, channel, version, name);

export interface StoredFile extends FileDigest {
  name: string;
}

export async function storeReleaseFile(
  root: string,
  product: string,
  channel: string,
  version: string,
  source: string,
): Promise<StoredFile> {
  const name = basename(source);
  if (!ReleaseFileName.safeParse(name).success)
    throw new CloudError(
      'invalid_request',
      `'${name.slice(0, 200)}' is not a release file name: letters, digits and . _ + -, at most 200, no spaces (rename the file)`,
    );
  const info = await stat(source).catch(() => null);
  if (!info?.isFile()) throw new CloudError('invalid_request', `no file at ${source.slice(0, 500)}`);
  const dir = join(root, product, channel, version);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const tmp = join(dir, `.${name}.${process.pid}.${Date.now()}.tmp`);
  const hash = createHash('sha512');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await pipeline(createReadStream(source), tap, createWriteStream(tmp, { mode: 0o644 }));
    const h = await open(tmp, 'r');
    await h.sync();
    await h.close();
    await rename(tmp, join(dir, name));
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  return { name, size, sha512: hash.digest('base64') };
}

/** A stored file for reading, or null when it is not there. */
export async function openReleaseFile(
  path: string,
): Promise<{ size: number; stream: () => NodeJS.ReadableStream } | null> {
  const info = await stat(path).catch(() => null);
  if (!info?.isFile()) return null;
  return { size: info.size, stream: () => createReadStream(path) };
}
