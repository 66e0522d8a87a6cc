import { AuditEntry } from '../../contract/audit.ts';
import type { AuditCursor, AuditFilter } from './filter.ts';
import { compareWithRange, entryMatches, linePrecheck, peekAt } from './filter.ts';
import type { ScanFile } from './file-set.ts';
import type { LineChunk } from './files.ts';
import { BackwardChunks, eachLineBackward, openForRead, parseLine } from './files.ts';
import { candidateRegions, statsMayMatch } from './summary.ts';

/** A matching entry and where its line starts (the cursor of a page that ends with it). */
export interface ScanHit {
  entry: AuditEntry;
  seq: number;
  offset: number;
}

/**
 * Matching entries, newest first (the newest file first, each file from its
 * end backwards), strictly older than `after`, at most `limit` of them,
 * yielded a chunk at a time. Work is skipped at every level: files and
 * ~1 MiB blocks whose summary cannot match are not read; with an equality
 * filter the scan jumps from one occurrence of its needle to the previous
 * without looking at the lines between; other lines are ruled out by a
 * substring peek before any JSON.parse; and in a file whose times only grow,
 * the first entry older than `from` ends the file.
 */
export async function* scanNewestFirst(
  files: ScanFile[],
  f: AuditFilter,
  after: AuditCursor | null,
  limit: number,
): AsyncGenerator<ScanHit[]> {
  let remaining = limit;
  const scratch = { buf: Buffer.alloc(0) };
  for (const file of files) {
    if (remaining <= 0) return;
    if (after && file.seq > after.seq) continue;
    const end = after && file.seq === after.seq ? Math.min(after.offset, file.bytes) : file.bytes;
    if (end <= 0 || !statsMayMatch(file.summary, f)) continue;
    const regions = candidateRegions(file.summary, f, end);
    if (regions.length === 0) continue;
    const fh = await openForRead(file.path);
    if (!fh) continue; // swept since the snapshot
    try {
      const monotonic = file.summary.monotonic;
      regions: for (const region of regions) {
        const chunks = new BackwardChunks(fh, region.end, region.start, scratch);
        for (let chunk = await chunks.next(); chunk; chunk = await chunks.next()) {
          if (monotonic && chunkIsAfterRange(chunk, f)) continue;
          const { hits, pastRange } = scanChunk(chunk, file.seq, f, monotonic, remaining);
          remaining -= hits.length;
          if (hits.length > 0) yield hits;
          if (remaining <= 0 || pastRange) break regions;
        }
      }
    } finally {
      await fh.close();
    }
  }
}

/** In a file whose times only grow, a chunk whose oldest line is at or after `to` holds nothing in range. */
function chunkIsAfterRange(chunk: LineChunk, f: AuditFilter): boolean {
  if (f.toMs === null) return false;
  const nl = chunk.buf.indexOf(10);
  const at = peekAt(chunk.buf, 0, nl < 0 ? chunk.buf.length : nl);
  if (at === null) return false;
  const ms = Date.parse(at);
  return !Number.isNaN(ms) && ms >= f.toMs;
}

function scanChunk(
  chunk: LineChunk,
  seq: number,
  f: AuditFilter,
  monotonic: boolean,
  want: number,
): { hits: ScanHit[]; pastRange: boolean } {
  const buf = chunk.buf;
  const hits: ScanHit[] = [];
  let pastRange = false;

  const visit = (start: number, end: number): boolean => {
    if (!linePrecheck(buf, start, end, f)) {
      // Times only grow in this file: the first entry before `from` means every earlier one is too.
      if (monotonic && f.fromMs !== null) {
        const at = peekAt(buf, start, end);
        if (at !== null && compareWithRange(at, f) === -1 && parseLine(buf, start, end) !== null) {
          pastRange = true;
          return false;
        }
      }
      return true;
    }
    const obj = parseLine(buf, start, end);
    if (obj === null || !entryMatches(obj, f)) return true;
    const valid = AuditEntry.safeParse(obj);
    if (!valid.success) return true;
    hits.push({ entry: valid.data, seq, offset: chunk.base + start });
    return hits.length < want;
  };

  const needle = f.needles[0];
  if (needle === undefined) {
    eachLineBackward(buf, visit);
  } else {
    let pos = buf.length;
    while (pos > 0) {
      const m = buf.lastIndexOf(needle, pos - 1);
      if (m < 0) break;
      const start = m === 0 ? 0 : buf.lastIndexOf(10, m) + 1;
      let end = buf.indexOf(10, m);
      if (end < 0) end = buf.length;
      if (!visit(start, end)) break;
      pos = start;
    }
  }
  return { hits, pastRange };
}
