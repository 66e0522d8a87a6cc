import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeFileAtomic } from '../atomic-write.ts';
import { forwardChunks, openForRead, parseLine } from './files.ts';
import type { Combos, FileSummary, Stats, ValueSets } from './summary.ts';
import { SUMMARY_KEYS } from './filter.ts';
import { addToSummary, comboKey, emptySummary, summaryFieldsOf } from './summary.ts';
import { lazySchema } from '../../contract/lazy-schema.ts';

/**
 * A closed file's summary is kept beside it (`….summary.json`) so a start
 * with a million entries reads a few KiB per file instead of every line. It
 * is only a cache: missing, corrupt or stale (the file's size changed) means
 * the file is read once to rebuild it.
 */

const Values = lazySchema(() => z.record(z.enum(SUMMARY_KEYS), z.array(z.string()).nullable()));
const StatsShape = {
  count: lazySchema(() => z.number().int().nonnegative()),
  minMs: lazySchema(() => z.number().nullable()),
  maxMs: lazySchema(() => z.number().nullable()),
  values: Values,
  /** absent in sidecars written before combos were kept: unknown */
  combos: lazySchema(() => z.array(z.array(z.string().nullable())).nullable().optional()),
};
const Sidecar = lazySchema(() =>
  z.object({
    v: z.literal(2),
    /** the file's size when the sidecar was written */
    fileBytes: z.number().int().nonnegative(),
    bytes: z.number().int().nonnegative(),
    monotonic: z.boolean(),
    lastMs: z.number().nullable(),
    ...StatsShape,
    blocks: z.array(
      z.object({ start: z.number().int().nonnegative(), end: z.number().int().nonnegative(), ...StatsShape }),
    ),
  }),
);

const valuesOut = (v: ValueSets) =>
  Object.fromEntries(SUMMARY_KEYS.map((k) => [k, v[k] ? [...(v[k] as Set<string>)] : null]));
const valuesIn = (v: z.infer<typeof Values>): ValueSets =>
  Object.fromEntries(SUMMARY_KEYS.map((k) => [k, v[k] ? new Set(v[k]) : null])) as ValueSets;
const statsOut = (s: Stats) => ({
  count: s.count,
  minMs: s.minMs,
  maxMs: s.maxMs,
  values: valuesOut(s.values),
  combos: s.combos ? [...s.combos.values()] : null,
});
const combosIn = (c: Array<Array<string | null>> | null | undefined): Combos | null =>
  c && c.every((x) => x.length === SUMMARY_KEYS.length) ? new Map(c.map((x) => [comboKey(x), x])) : null;

export async function writeSidecar(path: string, s: FileSummary, fileBytes: number): Promise<void> {
  const body = {
    v: 2,
    fileBytes,
    bytes: s.bytes,
    monotonic: s.monotonic,
    lastMs: s.lastMs,
    ...statsOut(s),
    blocks: s.blocks.map((b) => ({ start: b.start, end: b.end, ...statsOut(b) })),
  };
  await writeFileAtomic(path, JSON.stringify(body), { mode: 0o600 });
}

/** The sidecar's summary when it describes a file of exactly `fileBytes` bytes; null when missing, corrupt or stale. */
export async function readSidecar(path: string, fileBytes: number): Promise<FileSummary | null> {
  let parsed: z.infer<typeof Sidecar>;
  try {
    parsed = Sidecar.parse(JSON.parse(await readFile(path, 'utf8')));
  } catch {
    return null;
  }
  if (parsed.fileBytes !== fileBytes || parsed.bytes > fileBytes) return null;
  // Blocks must tile [0, bytes) or a reader could skip entries.
  let at = 0;
  for (const b of parsed.blocks) {
    if (b.start !== at || b.end < b.start) return null;
    at = b.end;
  }
  if (at !== parsed.bytes) return null;
  return {
    bytes: parsed.bytes,
    count: parsed.count,
    minMs: parsed.minMs,
    maxMs: parsed.maxMs,
    monotonic: parsed.monotonic,
    lastMs: parsed.lastMs,
    values: valuesIn(parsed.values),
    combos: combosIn(parsed.combos),
    blocks: parsed.blocks.map((b) => ({
      start: b.start,
      end: b.end,
      count: b.count,
      minMs: b.minMs,
      maxMs: b.maxMs,
      values: valuesIn(b.values),
      combos: combosIn(b.combos),
    })),
  };
}

/**
 * Rebuilds a summary by reading the whole file. Lines that do not parse are
 * counted as room, not entries; a last line without a newline (a write cut
 * short by a crash) is left out, and `torn` says so.
 */
export async function scanSummary(path: string, fileBytes: number): Promise<{ summary: FileSummary; torn: boolean }> {
  const s = emptySummary();
  const fh = await openForRead(path);
  if (!fh) return { summary: s, torn: false };
  try {
    for await (const { buf } of forwardChunks(fh, fileBytes)) {
      let start = 0;
      for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10, start)) {
        const e = parseLine(buf, start, nl);
        addToSummary(s, e && summaryFieldsOf(e), nl + 1 - start);
        start = nl + 1;
      }
    }
  } finally {
    await fh.close();
  }
  return { summary: s, torn: s.bytes !== fileBytes };
}
