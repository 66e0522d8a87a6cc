import { SUMMARY_KEYS, type AuditFilter, type SummaryKey } from './filter.ts';

/**
 * What a query needs to know about a file without reading it: how many bytes
 * hold entries, the time span, and the distinct values of each filterable
 * field, for the whole file and for each block of about 1 MiB of it. A
 * filtered query skips every file, then every block, that cannot match, so
 * a rare tool costs a few reads, not a million parses.
 */

/** Blocks close once they reach this size (always on a line boundary). */
export const BLOCK_BYTES = 1024 * 1024;
/** Past this many distinct values a set is dropped (null = "anything may be here"). */
const MAX_DISTINCT_FILE = 4096;
const MAX_DISTINCT_BLOCK = 1024;
/** Past this many distinct combinations of those values, combos are dropped (null) too. */
const MAX_COMBOS_FILE = 2048;
const MAX_COMBOS_BLOCK = 256;

export type ValueSets = Record<SummaryKey, Set<string> | null>;

/** One entry's values of SUMMARY_KEYS, in that order. */
export type Combo = ReadonlyArray<string | null>;
/**
 * The distinct combinations of those values, by their joined key: a query filtering on two fields (a token
 * and `result=confirmed`) skips a block where each value occurs but never together; null = unknown.
 */
export type Combos = Map<string, Combo>;

/** The fields of one entry a summary tracks. */
export type SummaryFields = { atMs: number } & { [K in SummaryKey]: string | null };

export interface Stats {
  count: number;
  minMs: number | null;
  maxMs: number | null;
  values: ValueSets;
  combos: Combos | null;
}

/** Bytes [start, end) of a file: whole lines. */
export interface BlockSummary extends Stats {
  start: number;
  end: number;
}

export interface FileSummary extends Stats {
  /** bytes of the file that hold complete, acknowledged lines */
  bytes: number;
  /** every entry's `at` >= the previous one's: lets a time-range scan stop early */
  monotonic: boolean;
  lastMs: number | null;
  /** tile [0, bytes) in order */
  blocks: BlockSummary[];
}

export const emptyValues = (): ValueSets => ({
  tool: new Set(),
  result: new Set(),
  user_id: new Set(),
  token_id: new Set(),
  source_plugin: new Set(),
});

export function emptySummary(): FileSummary {
  return {
    bytes: 0,
    count: 0,
    minMs: null,
    maxMs: null,
    monotonic: true,
    lastMs: null,
    values: emptyValues(),
    combos: new Map(),
    blocks: [],
  };
}

/** Accounts for one line of `bytes` bytes; `f` null for a line that is not an entry (it still takes room). */
export function addToSummary(s: FileSummary, f: SummaryFields | null, bytes: number): void {
  let b = s.blocks[s.blocks.length - 1];
  if (!b || b.end - b.start >= BLOCK_BYTES) {
    b = { start: s.bytes, end: s.bytes, count: 0, minMs: null, maxMs: null, values: emptyValues(), combos: new Map() };
    s.blocks.push(b);
  }
  b.end += bytes;
  s.bytes += bytes;
  if (!f) return;
  addStats(s, f, MAX_DISTINCT_FILE, MAX_COMBOS_FILE);
  addStats(b, f, MAX_DISTINCT_BLOCK, MAX_COMBOS_BLOCK);
  if (!Number.isNaN(f.atMs)) {
    if (s.lastMs !== null && f.atMs < s.lastMs) s.monotonic = false;
    s.lastMs = f.atMs;
  }
}

export const comboKey = (c: Combo): string => c.map((v) => (v === null ? '\u0001' : v)).join('\u0000');

function addStats(s: Stats, f: SummaryFields, maxDistinct: number, maxCombos: number): void {
  s.count++;
  if (!Number.isNaN(f.atMs)) {
    if (s.minMs === null || f.atMs < s.minMs) s.minMs = f.atMs;
    if (s.maxMs === null || f.atMs > s.maxMs) s.maxMs = f.atMs;
  }
  for (const key of SUMMARY_KEYS) {
    const set = s.values[key];
    const v = f[key];
    if (set === null || v === null || set.has(v)) continue;
    if (set.size >= maxDistinct) s.values[key] = null;
    else set.add(v);
  }
  if (s.combos) {
    const combo = SUMMARY_KEYS.map((k) => f[k]);
    const key = comboKey(combo);
    if (!s.combos.has(key)) {
      if (s.combos.size >= maxCombos) s.combos = null;
      else s.combos.set(key, combo);
    }
  }
}

/** False only when no entry counted in `s` can pass the filter. */
export function statsMayMatch(s: Stats, f: AuditFilter): boolean {
  if (s.count === 0) return false;
  if (f.fromMs !== null && (s.maxMs === null || s.maxMs < f.fromMs)) return false;
  if (f.toMs !== null && (s.minMs === null || s.minMs >= f.toMs)) return false;
  for (const [key, want] of f.equals) {
    const set = s.values[key];
    if (set !== null && !set.has(want)) return false;
  }
  if (s.combos && f.equalsAt.length > 1) {
    for (const combo of s.combos.values()) if (f.equalsAt.every(([i, want]) => combo[i] === want)) return true;
    return false;
  }
  return true;
}

/**
 * The byte ranges of a file below `end` that may hold matches, newest first,
 * neighbouring blocks merged so a long run is read as one.
 */
export function candidateRegions(s: FileSummary, f: AuditFilter, end: number): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  for (let i = s.blocks.length - 1; i >= 0; i--) {
    const b = s.blocks[i] as BlockSummary;
    if (b.start >= end || !statsMayMatch(b, f)) continue;
    const last = out[out.length - 1];
    const bEnd = Math.min(b.end, end);
    if (last && last.start === bEnd) last.start = b.start;
    else out.push({ start: b.start, end: bEnd });
  }
  return out;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export function summaryFieldsOf(e: Record<string, unknown>): SummaryFields {
  return {
    atMs: typeof e.at === 'string' ? Date.parse(e.at) : NaN,
    tool: str(e.tool),
    result: str(e.result),
    user_id: str(e.user_id),
    token_id: str(e.token_id),
    source_plugin: str(e.source_plugin),
  };
}
