import { HttpError } from './http-error.ts';

export const DEFAULT_MAX_DEPTH = 64;

export interface JsonOptions {
  /** arrays and objects nested deeper than this are refused; default 64 */
  maxDepth?: number;
}

const parseError = (message: string) => new HttpError('parse_error', message);

/**
 * JSON.parse for bodies from clients. Before parsing, one pass refuses what
 * would hurt us later: nesting deeper than `maxDepth` (code that walks the
 * value recursively, validators included, would overflow the stack and answer
 * 500) and lone UTF-16 surrogates, written `\ud800` or raw (I-JSON, RFC 7493:
 * stores and strict JSON tools refuse them). Every refusal is a 400
 * parse_error; this function never throws anything else.
 */
export function parseJson(body: Buffer | string, opts: JsonOptions = {}): unknown {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  // A Buffer decodes lone surrogates to U+FFFD; a string may hold them raw. (Node 20 has isWellFormed; the ES2023 lib types lack it.)
  if (typeof body === 'string' && !(text as string & { isWellFormed(): boolean }).isWellFormed()) throw parseError('the body holds a lone UTF-16 surrogate: send well-formed Unicode');
  checkStructure(text, opts.maxDepth ?? DEFAULT_MAX_DEPTH);
  try {
    return JSON.parse(text);
  } catch {
    // V8's message quotes the input, which may hold a secret: say only what is wrong.
    throw parseError('request body is not valid JSON');
  }
}

const STRUCTURE = /["[\]{}]/g;
const STRING_STOP = /["\\]/g;

/**
 * Depth and escaped-surrogate check in one linear pass. It jumps between the
 * characters that matter with native regex search, so a 4 MiB body costs a
 * few milliseconds. It is lenient about everything JSON.parse refuses anyway.
 */
function checkStructure(text: string, maxDepth: number): void {
  let depth = 0;
  let i = 0;
  for (;;) {
    STRUCTURE.lastIndex = i;
    const m = STRUCTURE.exec(text);
    if (!m) return;
    i = m.index + 1;
    const c = m[0];
    if (c === '"') {
      i = skipString(text, i);
      if (i < 0) return; // unterminated: JSON.parse says so
    } else if (c === '[' || c === '{') {
      if (++depth > maxDepth) throw parseError(`JSON nested deeper than ${maxDepth} levels`);
    } else {
      depth--;
    }
  }
}

const HEX4 = /^[0-9a-fA-F]{4}$/;
const unit = (text: string, at: number): number => (text[at] === '\\' && text[at + 1] === 'u' && HEX4.test(text.slice(at + 2, at + 6)) ? parseInt(text.slice(at + 2, at + 6), 16) : -1);

/** From just after an opening quote to just after the closing one (-1 if none); refuses escaped lone surrogates. */
function skipString(text: string, from: number): number {
  let i = from;
  for (;;) {
    STRING_STOP.lastIndex = i;
    const m = STRING_STOP.exec(text);
    if (!m) return -1;
    if (m[0] === '"') return m.index + 1;
    const u = unit(text, m.index);
    if (u >= 0xd800 && u <= 0xdbff) {
      const low = unit(text, m.index + 6);
      if (low < 0xdc00 || low > 0xdfff) throw parseError('the body holds a lone UTF-16 surrogate escape (\\ud800-\\udbff without its pair): send well-formed Unicode');
      i = m.index + 12;
    } else if (u >= 0xdc00 && u <= 0xdfff) {
      throw parseError('the body holds a lone UTF-16 surrogate escape (\\udc00-\\udfff without its pair): send well-formed Unicode');
    } else {
      i = m.index + 2; // any other escape: skip the backslash and the escaped character
    }
  }
}
