import { createHash, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';

/**
 * SHA-512 of release files, base64-encoded: the form electron-updater's
 * `latest*.yml` carries and checks a download against.
 */

export interface FileDigest {
  sha512: string;
  size: number;
}

export function sha512Base64(bytes: Uint8Array): string {
  return createHash('sha512').update(bytes).digest('base64');
}

/** Streams the file, so a large installer is never held in memory. */
export async function hashFile(path: string): Promise<FileDigest> {
  const hash = createHash('sha512');
  let size = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha512: hash.digest('base64'), size };
}

/** Constant-time comparison of two base64 SHA-512 digests; false for anything that is not one. */
export function sameSha512(a: string, b: string): boolean {
  const x = Buffer.from(a, 'base64');
  const y = Buffer.from(b, 'base64');
  return x.length === 64 && y.length === 64 && timingSafeEqual(x, y);
}
