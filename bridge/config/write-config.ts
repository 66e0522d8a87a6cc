import { constants } from 'node:fs';
import { copyFile, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import {
  applyEdits,
  format,
  modify,
  parse,
  printParseErrorCode,
  type FormattingOptions,
  type ParseError,
} from 'jsonc-parser';

/**
 * Puts one server entry into a client's config file and touches nothing
 * else: other servers, other top-level keys, the user's comments, trailing
 * commas and formatting stay as they were. Files are read as JSONC (VS Code's
 * mcp.json may hold comments and trailing commas); jsonc-parser edits the
 * text in place instead of re-serializing the document. A file that is not
 * JSONC is refused and left alone. The old file is copied to
 * `<file>.<timestamp>.bak` first; the new one replaces it atomically. Writing
 * the same entry again changes nothing and makes no backup.
 */

export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

export interface WriteResult {
  changed: boolean;
  created: boolean;
  replaced: boolean;
  backup?: string;
  /** the file's permission bits after the write */
  mode: number;
}

export interface ServerEntry {
  key: string;
  name: string;
  entry: Record<string, unknown>;
  /** VS Code: top-level `inputs` the entry refers to, matched by `id` */
  inputs?: Array<Record<string, unknown>>;
}

export async function writeServerEntry(file: string, want: ServerEntry, now = new Date()): Promise<WriteResult> {
  let original: string | undefined;
  try {
    original = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new ConfigFileError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const bom = original?.charCodeAt(0) === 0xfeff ? '\ufeff' : '';
  const blank = original === undefined || original.trim() === '' || original === bom;
  let text = blank ? '{}' : original!.slice(bom.length);

  const doc = parseDocument(text, file);
  const servers = doc[want.key] ?? {};
  if (!isPlainObject(servers))
    throw new ConfigFileError(`"${want.key}" in ${file} is not an object; it was left untouched`);
  const inputs = doc.inputs ?? [];
  if (want.inputs && !Array.isArray(inputs))
    throw new ConfigFileError(`"inputs" in ${file} is not an array; it was left untouched`);

  const replaced = Object.hasOwn(servers, want.name);
  const inputEdits = (want.inputs ?? []).filter(
    (input) => !(inputs as unknown[]).some((x) => isDeepStrictEqual(x, input)),
  );
  if (replaced && isDeepStrictEqual(servers[want.name], want.entry) && inputEdits.length === 0) {
    return { changed: false, created: false, replaced: false, mode: (await stat(file)).mode & 0o777 };
  }

  const formattingOptions = formattingOf(text);
  // Edits without formatting, then only the inserted text formatted: the lines around it stay exactly as they were.
  const edit = (path: (string | number)[], value: unknown, isArrayInsertion = false) => {
    for (const e of modify(text, path, value, { isArrayInsertion }).sort((a, b) => b.offset - a.offset)) {
      text = text.slice(0, e.offset) + e.content + text.slice(e.offset + e.length);
      text = applyEdits(text, format(text, { offset: e.offset, length: e.content.length }, formattingOptions));
    }
  };
  for (const input of inputEdits) {
    const at = (inputs as unknown[]).findIndex((x) => isPlainObject(x) && x.id === input.id);
    // An input of ours with other settings is replaced; a new one goes first, where a person looks for it.
    if (at >= 0) edit(['inputs', at], input);
    else if (doc.inputs === undefined) edit(['inputs'], [input]);
    else edit(['inputs', 0], input, true);
  }
  edit([want.key, want.name], want.entry);
  if (blank) {
    const fresh = { ...(want.inputs ? { inputs: want.inputs } : {}), [want.key]: { [want.name]: want.entry } };
    text = JSON.stringify(fresh, null, 2);
  }
  const out = `${bom}${text}${text.endsWith('\n') ? '' : '\n'}`;

  let backup: string | undefined;
  let mode = 0o600;
  if (original !== undefined) {
    mode = (await stat(file)).mode & 0o777;
    backup = await backupCopy(file, now);
  } else {
    await mkdir(dirname(file), { recursive: true });
  }
  await replaceAtomically(file, out, mode);
  return { changed: true, created: original === undefined, replaced, backup, mode };
}

function parseDocument(text: string, file: string): Record<string, unknown> {
  const errors: ParseError[] = [];
  const parsed: unknown = parse(text, errors, {
    allowTrailingComma: true,
    disallowComments: false,
    allowEmptyContent: false,
  });
  if (errors.length > 0) {
    const first = errors[0]!;
    const line = text.slice(0, first.offset).split('\n').length;
    throw new ConfigFileError(
      `${file} is not valid JSON or JSONC (${printParseErrorCode(first.error)} on line ${line}); it was left untouched. Fix it, or add the entry printed without --write by hand`,
    );
  }
  if (!isPlainObject(parsed)) throw new ConfigFileError(`${file} does not hold a JSON object; it was left untouched`);
  return parsed;
}

/** The file's own indentation and line ends, so an edit looks like the lines around it. */
function formattingOf(text: string): FormattingOptions {
  const m = text.match(/\n([ \t]+)["/]/);
  const indent = m ? m[1]! : '  ';
  return {
    insertSpaces: !indent.includes('\t'),
    tabSize: indent.includes('\t') ? 1 : indent.length,
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
}

async function backupCopy(file: string, now: Date): Promise<string> {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  for (let n = 0; n < 100; n++) {
    const candidate = `${file}.${stamp}${n ? `-${n}` : ''}.bak`;
    try {
      await copyFile(file, candidate, constants.COPYFILE_EXCL);
      return candidate;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new ConfigFileError(`cannot back up ${file}: ${(e as Error).message}; nothing was changed`);
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

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
