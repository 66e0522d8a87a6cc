import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ReleaseFileName } from '../contract/cloud/updates.ts';

/** What the signed manifest says a file is: the download must match it byte for byte. */
export interface ExpectedFile {
  name: string;
  size: number;
  /** base64 SHA-512, as the manifest and electron-updater carry it */
  sha512: string;
}

export type Verified = { ok: true; path: string } | { ok: false; reason: string };

/** https anywhere, http only to this machine (the reference gateway in a test, a local mirror). */
export function downloadUrlAllowed(raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.username || url.password) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

/** SHA-512 (base64) and size of a file on disk. */
export async function hashFile(path: string): Promise<{ sha512: string; size: number }> {
  const hash = createHash('sha512');
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha512: hash.digest('base64'), size };
}

/**
 * Download `url` into `dir/<name>` and keep it only if its size and SHA-512
 * are the manifest's. The bytes go to `<name>.partial` first (hashed on the
 * way, stopped as soon as there are more than promised), and the file gets
 * its real name only once verified, so a killed download or a tampered file
 * never looks like a finished one.
 */
export async function downloadVerified(o: {
  url: string;
  file: ExpectedFile;
  dir: string;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}): Promise<Verified> {
  const name = ReleaseFileName.safeParse(o.file.name);
  if (!name.success)
    return { ok: false, reason: 'the manifest names the file with something that is not a bare file name' };
  if (!downloadUrlAllowed(o.url))
    return { ok: false, reason: 'the download link is not https (or http to this machine)' };
  await mkdir(o.dir, { recursive: true });
  const final = join(o.dir, name.data);
  const partial = `${final}.partial`;
  await rm(partial, { force: true });

  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(o.url, { redirect: 'error', ...(o.signal ? { signal: o.signal } : {}) });
  } catch (e) {
    return { ok: false, reason: `the download failed: ${(e as Error).message}` };
  }
  if (!res.ok || !res.body) return { ok: false, reason: `the download was answered ${res.status}` };

  const hash = createHash('sha512');
  let size = 0;
  const out = await open(partial, 'wx', 0o600);
  let failure: string | null = null;
  try {
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > o.file.size) {
        failure = `the download is larger than the ${o.file.size} bytes the manifest signed`;
        break;
      }
      hash.update(chunk);
      await out.write(chunk);
    }
    if (!failure) await out.sync();
  } catch (e) {
    failure = `the download broke off: ${(e as Error).message}`;
  } finally {
    await out.close();
  }
  if (!failure && size !== o.file.size) failure = `the download has ${size} bytes, the manifest signed ${o.file.size}`;
  if (!failure && hash.digest('base64') !== o.file.sha512)
    failure = 'the downloaded file does not match the SHA-512 the manifest signed';
  if (failure) {
    await res.body.cancel().catch(() => undefined);
    await rm(partial, { force: true });
    return { ok: false, reason: failure };
  }
  await rename(partial, final);
  return { ok: true, path: final };
}
