import { createHash } from 'node:crypto';
import { readFile, realpath } from 'node:fs/promises';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { parse as parseToml, TomlError } from 'smol-toml';
import type { ConfigFormat } from '../contract/client-locations.ts';
import { GatehouseError } from '../core/errors.ts';

/**
 * One client config file as read: its bytes, their hash (what a later write
 * compares against), the parsed document, and the real file behind a symlink
 * (a dotfiles link is written through to its target, never replaced).
 * A file that does not parse is one error naming the file and line and
 * quoting none of its text (it may hold secrets).
 */

export interface ConfigText {
  /** the path as the client names it */
  file: string;
  /** the file a write goes to (the symlink's target) */
  real: string;
  text: string;
  hash: string;
  doc: Record<string, unknown>;
}

export const sha256 = (text: string | Buffer) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** The hash of a value's JSON with sorted keys: two spellings of one entry hash the same. */
export function valueHash(v: unknown): string {
  const sorted = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(sorted)
      : isObject(x)
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, sorted(x[k])]),
          )
        : x;
  return sha256(JSON.stringify(sorted(v)));
}

export const configError = (message: string, file: string) =>
  new GatehouseError('invalid_value', message, { path: file });

/** The file, or null when there is none; any other failure to read it is an error. */
export async function readConfig(file: string, format: ConfigFormat): Promise<ConfigText | null> {
  let real: string;
  let bytes: Buffer;
  try {
    real = await realpath(file);
    bytes = await readFile(real);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw configError(`cannot read ${file} (${code ?? (e as Error).message}); nothing was changed`, file);
  }
  const text = bytes.toString('utf8');
  return { file, real, text, hash: sha256(bytes), doc: parseConfig(text, format, file) };
}

export function parseConfig(text: string, format: ConfigFormat, file: string): Record<string, unknown> {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') return {};
  if (format === 'toml') {
    try {
      return parseToml(body) as Record<string, unknown>;
    } catch (e) {
      if (!(e instanceof TomlError)) throw e;
      // The first line of smol-toml's message only: the rest is a code block quoting the file.
      const why = e.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      throw configError(`${file} is not valid TOML (${why} on line ${e.line}); nothing was changed`, file);
    }
  }
  const errors: ParseError[] = [];
  const doc: unknown = parseJsonc(body, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length) {
    const first = errors[0]!;
    const line = body.slice(0, first.offset).split('\n').length;
    throw configError(
      `${file} is not valid JSON or JSONC (${printParseErrorCode(first.error)} on line ${line}); nothing was changed`,
      file,
    );
  }
  if (!isObject(doc)) throw configError(`${file} does not hold a JSON object; nothing was changed`, file);
  return doc;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The value at `path` in a document, or undefined. */
export function valueAt(doc: Record<string, unknown>, path: readonly string[]): unknown {
  let v: unknown = doc;
  for (const key of path) {
    if (!isObject(v) || !Object.hasOwn(v, key)) return undefined;
    v = v[key];
  }
  return v;
}
