import { constants } from 'node:fs';
import { copyFile, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

/**
 * Puts one server entry into a client's JSON config file and touches nothing
 * else: other servers and other top-level keys stay as they were. A file that
 * is not valid JSON (comments included) is refused and left alone. The old
 * file is copied to `<file>.<timestamp>.bak` first; the new one replaces it
 * atomically. Writing the same entry again changes nothing and makes no backup.
 */

export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

export interface WriteResult {
  changed: boolean;
  created: boolean;
  replaced: boolean;
  backup?: string;
}

export async function writeServerEntry(file: string, key: string, name: string, entry: Record<string, unknown>, now = new Date()): Promise<WriteResult> {
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new ConfigFileError(`cannot read ${file}: ${(e as Error).message}`);
  }

  let doc: Record<string, unknown> = {};
  if (text !== undefined && text.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(stripBom(text));
    } catch (e) {
      throw new ConfigFileError(`${file} is not valid JSON (${(e as Error).message}); it was left untouched. Fix it (comments are not allowed here), or add the entry printed without --write by hand`);
    }
    if (!isPlainObject(parsed)) throw new ConfigFileError(`${file} does not hold a JSON object; it was left untouched`);
    doc = parsed;
  }
  const servers = doc[key] ?? {};
  if (!isPlainObject(servers)) throw new ConfigFileError(`"${key}" in ${file} is not an object; it was left untouched`);

  const replaced = Object.hasOwn(servers, name);
  if (replaced && isDeepStrictEqual(servers[name], entry)) return { changed: false, created: false, replaced: false };

  // Assigning into the parsed objects keeps every other key in its place and order.
  servers[name] = entry;
  doc[key] = servers;
  const out = `${JSON.stringify(doc, null, indentOf(text))}\n`;

  let backup: string | undefined;
  let mode = 0o600;
  if (text !== undefined) {
    mode = (await stat(file)).mode & 0o777;
    backup = await backupCopy(file, now);
  } else {
    await mkdir(dirname(file), { recursive: true });
  }
  await replaceAtomically(file, out, mode);
  return { changed: true, created: text === undefined, replaced, backup };
}

async function backupCopy(file: string, now: Date): Promise<string> {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  for (let n = 0; n < 100; n++) {
    const candidate = `${file}.${stamp}${n ? `-${n}` : ''}.bak`;
    try {
      await copyFile(file, candidate, constants.COPYFILE_EXCL);
      return candidate;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new ConfigFileError(`cannot back up ${file}: ${(e as Error).message}; nothing was changed`);
    }
  }
  throw new ConfigFileError(`too many backups of ${file} in one second; nothing was changed`);
}

async function replaceAtomically(file: string, text: string, mode: number): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    await writeFile(tmp, text, { mode, flag: 'w' });
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw new ConfigFileError(`cannot write ${file}: ${(e as Error).message}; the file was left as it was`);
  }
}

function indentOf(text: string | undefined): string | number {
  const m = text?.match(/\n([ \t]+)"/);
  return m ? m[1]! : 2;
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
