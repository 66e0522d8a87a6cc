import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-write.ts';
import type { AuditFilter } from './audit-filter.ts';
import { forwardChunks, openForRead } from './audit-files.ts';

/**
 * What a query needs to know about a file without reading it: how many bytes
 * are entries, the time span, and the distinct values of each filterable
 * field. A filtered query skips every file whose summary says it cannot
 * match, so a rare tool costs a handful of reads, not a million parses.
 */

/** Past this many distinct values a set is dropped (null = "anything may be here"). */
const MAX_DISTINCT = 2048;

export const SUMMARY_KEYS = ['tool', 'result', 'user_id', 'token_id', 'source_plugin'] as const;
export type SummaryKey = (typeof SUMMARY_KEYS)[number];

/** The fields of one entry a summary tracks. */
export type SummaryFields = { atMs: number } & { [K in SummaryKey]: string | null };

export interface FileSummary {
  /** bytes of the file that hold complete, acknowledged lines */
  bytes: number;
  count: number;
  minMs: number | null;
  maxMs: number | null;
  /** every entry's `at` >= the previous one's: lets a time-range scan stop early */
  monotonic: boolean;
  lastMs: number | null;
  values: Record<SummaryKey, Set<string> | null>;
}

export function emptySummary(): FileSummary {
  return {
    bytes: 0,
    count: 0,
    minMs: null,
    maxMs: null,
    monotonic: true,
    lastMs: null,
    values: { tool: new Set(), result: new Set(), user_id: new Set(), token_id: new Set(), source_plugin: new Set() },
  };
}

export function addToSummary(s: FileSummary, f: SummaryFields, bytes: number): void {
  s.bytes += bytes;
  s.count++;
  if (!Number.isNaN(f.atMs)) {
    if (s.minMs === null || f.atMs < s.minMs) s.minMs = f.atMs;
    if (s.maxMs === null || f.atMs > s.maxMs) s.maxMs = f.atMs;
    if (s.lastMs !== null && f.atMs < s.lastMs) s.monotonic = false;
    s.lastMs = f.atMs;
  }
  for (const key of SUMMARY_KEYS) {
    const set = s.values[key];
    const v = f[key];
    if (set === null || v === null || set.has(v)) continue;
    if (set.size >= MAX_DISTINCT) s.values[key] = null;
    else set.add(v);
  }
}

/** False only when no entry of the file can pass the filter. */
export function summaryMayMatch(s: FileSummary, f: AuditFilter): boolean {
  if (s.count === 0) return false;
  if (f.fromMs !== null && (s.maxMs === null || s.maxMs < f.fromMs)) return false;
  if (f.toMs !== null && (s.minMs === null || s.minMs >= f.toMs)) return false;
  for (const [key, want] of f.equals) {
    const set = s.values[key];
    if (set !== null && !set.has(want)) return false;
  }
  return true;
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

const Sidecar = z.object({
  v: z.literal(1),
  /** the file's size when the sidecar was written: a different size means it is stale */
  fileBytes: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  count: z.number().int().nonnegative(),
  minMs: z.number().nullable(),
  maxMs: z.number().nullable(),
  monotonic: z.boolean(),
  lastMs: z.number().nullable(),
  values: z.record(z.enum(SUMMARY_KEYS), z.array(z.string()).nullable()),
});

export async function writeSidecar(path: string, s: FileSummary, fileBytes: number): Promise<void> {
  const values = Object.fromEntries(SUMMARY_KEYS.map((k) => [k, s.values[k] ? [...(s.values[k] as Set<string>)] : null]));
  const body = { v: 1, fileBytes, bytes: s.bytes, count: s.count, minMs: s.minMs, maxMs: s.maxMs, monotonic: s.monotonic, lastMs: s.lastMs, values };
  await writeFileAtomic(path, JSON.stringify(body), { mode: 0o600 });
}

/** The sidecar's summary when it describes exactly `fileBytes` bytes; null when missing, corrupt or stale. */
export async function readSidecar(path: string, fileBytes: number): Promise<FileSummary | null> {
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch {
    return null;
  }
  let parsed: z.infer<typeof Sidecar>;
  try {
    parsed = Sidecar.parse(JSON.parse(raw));
  } catch {
    return null;
  }
  if (parsed.fileBytes !== fileBytes || parsed.bytes > fileBytes) return null;
  const s = emptySummary();
  Object.assign(s, { bytes: parsed.bytes, count: parsed.count, minMs: parsed.minMs, maxMs: parsed.maxMs, monotonic: parsed.monotonic, lastMs: parsed.lastMs });
  for (const key of SUMMARY_KEYS) {
    const list = parsed.values[key];
    s.values[key] = list === undefined || list === null ? null : new Set(list);
  }
  return s;
}

/**
 * Rebuilds a summary by reading the whole file. Lines that do not parse (a
 * torn tail after a crash) are skipped; `bytes` covers the file up to the
 * end of its last complete line, and `torn` says whether anything follows.
 */
export async function scanSummary(path: string, fileBytes: number): Promise<{ summary: FileSummary; torn: boolean }> {
  const s = emptySummary();
  const fh = await openForRead(path);
  if (!fh) return { summary: s, torn: false };
  let lastLineEnd = 0;
  try {
    for await (const { buf, base } of forwardChunks(fh, fileBytes)) {
      let start = 0;
      while (start < buf.length) {
        const nl = buf.indexOf(10, start);
        if (nl < 0) break; // no newline: torn tail
        const fields = parseFields(buf, start, nl);
        if (fields) addToSummary(s, fields, 0);
        start = nl + 1;
        lastLineEnd = base + start;
      }
    }
  } finally {
    await fh.close();
  }
  s.bytes = lastLineEnd;
  return { summary: s, torn: lastLineEnd !== fileBytes };
}

function parseFields(buf: Buffer, start: number, end: number): SummaryFields | null {
  if (end <= start) return null;
  try {
    const e: unknown = JSON.parse(buf.toString('utf8', start, end));
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return null;
    return summaryFieldsOf(e as Record<string, unknown>);
  } catch {
    return null;
  }
}
