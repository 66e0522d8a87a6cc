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
  if (typeof body === 'string' && !(text as string & { isWellFormed(): boolean }).isWellFormed())
    throw parseError('the body holds a lone UTF-16 surrogate: send well-formed Unicode');
  checkStructure(text, opts.maxDepth ?? DEFAULT_MAX_DEPTH);
  try {
    return JSON.parse(text);
  } catch {
    // V8's message quotes the input, which may hold a secret: say only what is wrong.
    throw parseError('request body is not valid JSON');
  }
}

const BACKSLASH = 0x5c;
const U = 0x75;

/**
 * Depth and escaped-surrogate check in one linear pass. Outside strings it
 * looks at each character (brackets count depth); inside strings it jumps
 * with native indexOf from escape to escape and to the closing quote, so
 * long text costs little. It is lenient about everything JSON.parse refuses.
 */
function checkStructure(text: string, maxDepth: number): void {
  const n = text.length;
  let depth = 0;
  // Where the next backslash and quote are; each is searched again only once
  // passed, so text with many escapes and few quotes (or the reverse) stays linear.
  let nextEscape = text.indexOf('\\');
  let nextQuote = -1;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let j = i + 1;
      for (;;) {
        if (nextQuote < j) nextQuote = text.indexOf('"', j);
        if (nextQuote < 0) return; // unterminated: JSON.parse says so
        if (nextEscape !== -1 && nextEscape < j) nextEscape = text.indexOf('\\', j);
        if (nextEscape === -1 || nextEscape > nextQuote) {
          i = nextQuote;
          break;
        }
        j = skipEscape(text, nextEscape);
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) throw parseError(`JSON nested deeper than ${maxDepth} levels`);
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
}

/** Just past the escape at `at` (a backslash); refuses a \\u escape that is a lone surrogate. */
function skipEscape(text: string, at: number): number {
  if (text.charCodeAt(at + 1) !== U) return at + 2;
  const unit = hex4(text, at + 2);
  if (unit >= 0xd800 && unit <= 0xdbff) {
    const low = text.charCodeAt(at + 6) === BACKSLASH && text.charCodeAt(at + 7) === U ? hex4(text, at + 8) : -1;
    if (low < 0xdc00 || low > 0xdfff)
      throw parseError(
        'the body holds a lone UTF-16 surrogate escape (\\ud800-\\udbff without its pair): send well-formed Unicode',
      );
    return at + 12;
  }
  if (unit >= 0xdc00 && unit <= 0xdfff)
    throw parseError(
      'the body holds a lone UTF-16 surrogate escape (\\udc00-\\udfff without its pair): send well-formed Unicode',
    );
  return at + 6;
}

/** The value of four hex digits at `at`, or -1. */
function hex4(text: string, at: number): number {
  let v = 0;
  for (let k = at; k < at + 4; k++) {
    const c = text.charCodeAt(k);
    const d =
      c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}
