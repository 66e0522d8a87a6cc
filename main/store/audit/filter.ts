import type { AuditQueryInput } from '../../contract/audit.ts';
import { GatehouseError } from '../../core/errors.ts';

/** The entry fields a query filters on by equality, and that file summaries index. */
export const SUMMARY_KEYS = ['tool', 'result', 'user_id', 'token_id', 'source_plugin'] as const;
export type SummaryKey = (typeof SUMMARY_KEYS)[number];

/**
 * A query compiled for scanning: equality filters on entry fields, the time
 * range as milliseconds and as canonical ISO strings, and "needles": the
 * exact bytes a matching line must contain. Lines are written by this module
 * family with JSON.stringify in a fixed key order, so `,"tool":"x"` is in the
 * line when (and, inside a JSON line, only when) the tool is x: a substring
 * test rules most lines out before any JSON.parse.
 */
export interface AuditFilter {
  equals: Array<[SummaryKey, string]>;
  /** the same, by the key's index in SUMMARY_KEYS (how a summary's combos hold them) */
  equalsAt: Array<[number, string]>;
  /** the UTF-8 bytes of `,"<field>":<JSON value>` for each equality filter */
  needles: Buffer[];
  fromMs: number | null;
  toMs: number | null;
  fromIso: string | null;
  toIso: string | null;
}

const QUERY_KEYS: Array<['tool' | 'token_id' | 'user_id' | 'plugin' | 'result', SummaryKey]> = [
  // most selective first: the scan jumps from match to match of the first needle
  ['tool', 'tool'],
  ['token_id', 'token_id'],
  ['user_id', 'user_id'],
  ['plugin', 'source_plugin'],
  ['result', 'result'],
];

export type FilterInput = Pick<AuditQueryInput, 'tool' | 'result' | 'user_id' | 'token_id' | 'plugin' | 'from' | 'to'>;

export function compileFilter(q: FilterInput): AuditFilter {
  const equals: Array<[SummaryKey, string]> = [];
  for (const [qk, field] of QUERY_KEYS) {
    const v = q[qk];
    if (typeof v === 'string') equals.push([field, v]);
  }
  const needles = equals.map(([field, v]) => Buffer.from(`,"${field}":${JSON.stringify(v)}`, 'utf8'));
  const fromMs = parseBound('from', q.from);
  const toMs = parseBound('to', q.to);
  const equalsAt = equals.map(([field, v]): [number, string] => [SUMMARY_KEYS.indexOf(field), v]);
  return { equals, equalsAt, needles, fromMs, toMs, fromIso: canonicalIso(fromMs), toIso: canonicalIso(toMs) };
}

function parseBound(name: string, v: string | undefined): number | null {
  if (v === undefined) return null;
  const ms = Date.parse(v);
  if (Number.isNaN(ms))
    throw new GatehouseError('invalid_value', `audit query: "${name}" is not an ISO date-time`, { field: name });
  return ms;
}

function canonicalIso(ms: number | null): string | null {
  if (ms === null) return null;
  const iso = new Date(ms).toISOString();
  return isCanonicalIso(iso) ? iso : null;
}

/** `2026-11-22T07:37:46.123Z`: strings of this shape order like the instants they name. */
function isCanonicalIso(s: string): boolean {
  return (
    s.length === 24 &&
    s.charCodeAt(4) === 45 &&
    s.charCodeAt(10) === 84 &&
    s.charCodeAt(19) === 46 &&
    s.charCodeAt(23) === 90
  );
}

export function hasTimeRange(f: AuditFilter): boolean {
  return f.fromMs !== null || f.toMs !== null;
}

/** -1 before the range, 0 inside, 1 after it (or unparseable: never inside). */
export function compareWithRange(at: string, f: AuditFilter): -1 | 0 | 1 {
  if (isCanonicalIso(at) && (f.fromMs === null || f.fromIso !== null) && (f.toMs === null || f.toIso !== null)) {
    if (f.fromIso !== null && at < f.fromIso) return -1;
    if (f.toIso !== null && at >= f.toIso) return 1;
    return 0;
  }
  const ms = Date.parse(at);
  if (Number.isNaN(ms)) return 1;
  if (f.fromMs !== null && ms < f.fromMs) return -1;
  if (f.toMs !== null && ms >= f.toMs) return 1;
  return 0;
}

const AT_KEY = Buffer.from(',"at":"', 'latin1');

/** The `at` of the line buf[start, end) without parsing it; null when not found. */
export function peekAt(buf: Buffer, start: number, end: number): string | null {
  const i = buf.indexOf(AT_KEY, start);
  if (i < 0 || i >= end) return null;
  const j = buf.indexOf(34, i + AT_KEY.length); // the closing quote
  return j < 0 || j > end ? null : buf.toString('latin1', i + AT_KEY.length, j);
}

/** Cheap necessary test on the line buf[start, end): true when the line may match. */
export function linePrecheck(buf: Buffer, start: number, end: number, f: AuditFilter): boolean {
  if (f.needles.length > 0) {
    const line = buf.subarray(start, end);
    for (const n of f.needles) if (line.indexOf(n) < 0) return false;
  }
  if (hasTimeRange(f)) {
    const at = peekAt(buf, start, end);
    // Not found: leave the verdict to the full check after parsing.
    if (at !== null && compareWithRange(at, f) !== 0) return false;
  }
  return true;
}

/** The exact test on a parsed line. Also rejects lines that are not entries at all. */
export function entryMatches(e: Record<string, unknown>, f: AuditFilter): boolean {
  if (typeof e.id !== 'string' || typeof e.at !== 'string' || typeof e.tool !== 'string') return false;
  for (const [key, want] of f.equals) if (e[key] !== want) return false;
  return !hasTimeRange(f) || compareWithRange(e.at, f) === 0;
}

/** Where a page stopped: the file and the byte offset of the last entry returned. */
export interface AuditCursor {
  seq: number;
  offset: number;
}

export function encodeCursor(c: AuditCursor): string {
  return Buffer.from(`a1:${c.seq}:${c.offset}`, 'utf8').toString('base64url');
}

export function decodeCursor(s: string): AuditCursor {
  const m = /^a1:(\d{1,15}):(\d{1,15})$/.exec(Buffer.from(s, 'base64url').toString('utf8'));
  if (!m?.[1] || !m[2])
    throw new GatehouseError('invalid_value', 'audit query: the cursor is not one this log handed out', {
      field: 'cursor',
    });
  return { seq: Number(m[1]), offset: Number(m[2]) };
}
