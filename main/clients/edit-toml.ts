import { configError } from './config-file.ts';

/**
 * Codex's config.toml edited as text: one `[mcp_servers.NAME]` table (with
 * its subtables, `[mcp_servers.NAME.env]`) is cut out or put in as a range of
 * lines, every other byte stays. TOML libraries that parse and stringify lose
 * comments and order, so none is used for writing. A server written another
 * way (an inline table, dotted keys under `[mcp_servers]`) has no range of
 * its own: that is refused with a clear message, never rewritten.
 */

interface Line {
  start: number;
  end: number;
  text: string;
}

function lines(text: string): Line[] {
  const out: Line[] = [];
  let at = 0;
  while (at < text.length) {
    const nl = text.indexOf('\n', at);
    const end = nl === -1 ? text.length : nl + 1;
    out.push({ start: at, end, text: text.slice(at, end) });
    at = end;
  }
  return out;
}

/** The keys of a `[a."b".c]` or `[[a.b]]` header, or null for a line that is no header. */
function headerKeys(line: string): string[] | null {
  const m = line.match(/^[ \t]*\[\[?(.*?)\]\]?[ \t]*(#.*)?\r?\n?$/);
  if (!m) return null;
  const keys: string[] = [];
  const src = m[1]!;
  let i = 0;
  while (i < src.length) {
    while (src[i] === ' ' || src[i] === '\t') i++;
    if (src[i] === '"' || src[i] === "'") {
      const q = src[i]!;
      let j = i + 1;
      let key = '';
      while (j < src.length && src[j] !== q) {
        if (q === '"' && src[j] === '\\') {
          key += JSON.parse(`"${src.slice(j, j + 2)}"`) as string;
          j += 2;
        } else key += src[j++];
      }
      keys.push(key);
      i = j + 1;
    } else {
      const m2 = src.slice(i).match(/^[A-Za-z0-9_-]+/);
      if (!m2) return null;
      keys.push(m2[0]);
      i += m2[0].length;
    }
    while (src[i] === ' ' || src[i] === '\t') i++;
    if (i < src.length && src[i] !== '.') return null;
    i++;
  }
  return keys;
}

/** The header lines of the document, skipping multi-line strings. */
function headers(text: string): Array<Line & { keys: string[] }> {
  const out: Array<Line & { keys: string[] }> = [];
  let inString: string | null = null;
  for (const l of lines(text)) {
    if (!inString) {
      const keys = headerKeys(l.text);
      if (keys) out.push({ ...l, keys });
    }
    for (const q of l.text.match(/"""|'''/g) ?? []) inString = inString === null ? q : inString === q ? null : inString;
  }
  return out;
}

const startsWith = (keys: string[], prefix: string[]) => prefix.every((k, i) => keys[i] === k);

/** The byte range of the table `[...path, name]` and its subtables; null when it has no header of its own. */
export function tomlTableRange(
  text: string,
  path: readonly string[],
  name: string,
): { start: number; end: number } | null {
  const own = [...path, name];
  const hs = headers(text);
  const i = hs.findIndex((h) => h.keys.length === own.length && startsWith(h.keys, own));
  if (i === -1) return null;
  const next = hs.slice(i + 1).find((h) => !startsWith(h.keys, own));
  let end = next ? next.start : text.length;
  // Comment lines right above the next header belong to it.
  if (next) {
    const before = lines(text.slice(hs[i]!.end, end)).map((l) => ({ ...l, start: l.start + hs[i]!.end }));
    for (let k = before.length - 1; k >= 0 && /^[ \t]*#/.test(before[k]!.text); k--) end = before[k]!.start;
  }
  return { start: hs[i]!.start, end };
}

/** Like tomlTableRange, but a server that is in the document without a table of its own is an error naming the file. */
export function requireTableRange(text: string, path: readonly string[], name: string, file: string) {
  const range = tomlTableRange(text, path, name);
  if (!range)
    throw configError(
      `${file}: server "${name}" is not written as its own [${[...path, name].map(tomlKey).join('.')}] table (an inline table or dotted keys), so it cannot be changed without rewriting more of the file; nothing was changed. Move it into its own table, or edit it by hand`,
      file,
    );
  return range;
}

export const tomlKey = (k: string) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k));

function tomlValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(', ')}]`;
  if (v && typeof v === 'object')
    return `{ ${Object.entries(v)
      .map(([k, x]) => `${tomlKey(k)} = ${tomlValue(x)}`)
      .join(', ')} }`;
  throw new Error(`cannot write ${typeof v} as TOML`);
}

/** A `[path.name]` table holding `entry`, each key on its line (objects as inline tables). */
export function tomlTable(path: readonly string[], name: string, entry: Record<string, unknown>, eol = '\n'): string {
  return [
    `[${[...path, name].map(tomlKey).join('.')}]`,
    ...Object.entries(entry).map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`),
    '',
  ].join(eol);
}

/** `text` with `insert` put at `at`, on a line of its own with one blank line before it. */
export function spliceTable(text: string, at: number, insert: string): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const before = text.slice(0, at);
  const lead = before === '' ? '' : before.endsWith(`${eol}${eol}`) ? '' : before.endsWith(eol) ? eol : eol + eol;
  const after = text.slice(at);
  return before + lead + insert + (after === '' || after.startsWith(eol) ? '' : eol) + after;
}
