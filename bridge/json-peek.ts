/**
 * Finds where the values of an object's keys sit in JSON bytes without
 * decoding the rest: a 512 KB tool argument or an 8 MiB result is skipped over
 * (strings by memchr for their closing quote), never turned into a JS string.
 * The bridge uses it for messages too large to JSON.parse cheaply.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

export type Ranges = Map<string, [start: number, end: number]>;

function skipWs(buf: Buffer, i: number): number {
  while (i < buf.length) {
    const c = buf[i]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** `i` at an opening quote; returns the index after the closing one, or -1. */
function skipString(buf: Buffer, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = buf.indexOf(QUOTE, from);
    if (q === -1) return -1;
    let slashes = 0;
    for (let k = q - 1; k > i && buf[k] === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** `i` at the start of a value; returns the index just after it, or -1. */
function skipValue(buf: Buffer, i: number): number {
  const c = buf[i];
  if (c === QUOTE) return skipString(buf, i);
  if (c === OPEN_OBJ || c === OPEN_ARR) {
    let depth = 0;
    while (i < buf.length) {
      const b = buf[i]!;
      if (b === QUOTE) {
        i = skipString(buf, i);
        if (i === -1) return -1;
        continue;
      }
      if (b === OPEN_OBJ || b === OPEN_ARR) depth++;
      else if (b === CLOSE_OBJ || b === CLOSE_ARR) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }
  while (i < buf.length) {
    const b = buf[i]!;
    if (b === COMMA || b === CLOSE_OBJ || b === CLOSE_ARR || b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09)
      break;
    i++;
  }
  return i;
}

/** The value ranges of the object starting at `start` (its keys decoded), or undefined when it is not an object. */
export function objectRanges(buf: Buffer, start = 0): Ranges | undefined {
  let i = skipWs(buf, start);
  if (buf[i] !== OPEN_OBJ) return undefined;
  const out: Ranges = new Map();
  i = skipWs(buf, i + 1);
  if (buf[i] === CLOSE_OBJ) return out;
  for (;;) {
    if (buf[i] !== QUOTE) return undefined;
    const keyEnd = skipString(buf, i);
    if (keyEnd === -1) return undefined;
    const key = decode(buf, i, keyEnd) as string;
    i = skipWs(buf, keyEnd);
    if (buf[i] !== COLON) return undefined;
    const valueStart = skipWs(buf, i + 1);
    const valueEnd = skipValue(buf, valueStart);
    if (valueEnd === -1) return undefined;
    out.set(key, [valueStart, valueEnd]);
    i = skipWs(buf, valueEnd);
    if (buf[i] === COMMA) {
      i = skipWs(buf, i + 1);
      continue;
    }
    return buf[i] === CLOSE_OBJ ? out : undefined;
  }
}

/** Decodes one value range; undefined when it is not valid JSON. */
export function decode(buf: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(buf.toString('utf8', start, end));
  } catch {
    return undefined;
  }
}

/** Decodes the value of `key` when it is present and at most `limit` bytes long. */
export function smallValue(buf: Buffer, ranges: Ranges, key: string, limit = 16 * 1024): unknown {
  const r = ranges.get(key);
  if (!r || r[1] - r[0] > limit) return undefined;
  return decode(buf, r[0], r[1]);
}
