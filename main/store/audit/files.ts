import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';

/**
 * Names and raw reading of the audit files. A file is
 * `audit-<UTC yyyymmddThhmmssSSSZ>-<seq>.jsonl`; `seq` grows by one per file
 * and is what orders files (the timestamp is for people and can go backwards
 * with the clock). Its summary sidecar is the same name with `.summary.json`.
 */

const NAME_RE = /^audit-(\d{8}T\d{9}Z)-(\d{6,})\.jsonl$/;

export function auditFileName(nowMs: number, seq: number): string {
  const iso = new Date(nowMs).toISOString(); // 2026-11-22T07:37:46.123Z
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${iso.slice(20, 23)}Z`;
  return `audit-${stamp}-${String(seq).padStart(6, '0')}.jsonl`;
}

/** The file's sequence number and creation time; null for any other name. */
export function parseAuditFileName(name: string): { seq: number; createdMs: number } | null {
  const m = NAME_RE.exec(name);
  const stamp = m?.[1];
  if (!stamp || !m[2]) return null;
  const seq = Number(m[2]);
  const createdMs = Date.parse(
    `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}.${stamp.slice(15, 18)}Z`,
  );
  return Number.isSafeInteger(seq) && !Number.isNaN(createdMs) ? { seq, createdMs } : null;
}

export function sidecarName(fileName: string): string {
  return fileName.replace(/\.jsonl$/, '.summary.json');
}

/** A run of whole lines read from a file: `buf` holds bytes [base, base + buf.length). */
export interface LineChunk {
  buf: Buffer;
  base: number;
}

const FIRST_CHUNK = 64 * 1024;
const MAX_CHUNK = 1024 * 1024;

/**
 * Reads [floor, end) of a file backwards, newest bytes first, in chunks that
 * start at a line start (`floor` must be one). Chunks begin small (a first
 * page needs a few KiB) and grow, so long scans make few reads. A line longer
 * than the chunk makes the read grow until the line fits. A chunk's bytes are
 * valid until the next call: one buffer serves the whole scan.
 */
export class BackwardChunks {
  private pos: number;
  private size = FIRST_CHUNK;

  constructor(
    private readonly fh: FileHandle,
    end: number,
    private readonly floor = 0,
    private scratch: { buf: Buffer } = { buf: Buffer.alloc(0) },
  ) {
    this.pos = end;
  }

  async next(): Promise<LineChunk | null> {
    while (this.pos > this.floor) {
      const start = Math.max(this.floor, this.pos - this.size);
      const buf = await this.read(start, this.pos - start);
      if (start === this.floor) {
        this.pos = this.floor;
        return { buf, base: start };
      }
      // The bytes before the first newline belong to a line that began earlier.
      const nl = buf.indexOf(10);
      if (nl < 0 || nl === buf.length - 1) {
        this.size *= 2;
        continue;
      }
      this.pos = start + nl + 1;
      this.size = Math.min(MAX_CHUNK, this.size * 2);
      return { buf: buf.subarray(nl + 1), base: start + nl + 1 };
    }
    return null;
  }

  private async read(position: number, length: number): Promise<Buffer> {
    if (this.scratch.buf.length < length) this.scratch.buf = Buffer.allocUnsafe(Math.max(length, MAX_CHUNK));
    return readInto(this.fh, this.scratch.buf.subarray(0, length), position);
  }
}

/** Reads [0, end) forwards in whole-line chunks (for rebuilding a summary). */
export async function* forwardChunks(fh: FileHandle, end: number): AsyncGenerator<LineChunk> {
  let pos = 0;
  let size = MAX_CHUNK;
  while (pos < end) {
    const len = Math.min(size, end - pos);
    const buf = await readInto(fh, Buffer.allocUnsafe(len), pos);
    if (pos + len === end) {
      yield { buf, base: pos };
      return;
    }
    const nl = buf.lastIndexOf(10);
    if (nl < 0) {
      size *= 2;
      continue;
    }
    yield { buf: buf.subarray(0, nl + 1), base: pos };
    pos += nl + 1;
    size = MAX_CHUNK;
  }
}

async function readInto(fh: FileHandle, buf: Buffer, position: number): Promise<Buffer> {
  const length = buf.length;
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) return buf.subarray(0, done); // the file shrank under us: read what is there
    done += bytesRead;
  }
  return buf;
}

/** Opens for reading; null when the file is gone (swept while a reader ran). */
export async function openForRead(path: string): Promise<FileHandle | null> {
  try {
    return await open(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** The JSON object on the line buf[start, end); null for a torn, empty or foreign line. */
export function parseLine(buf: Buffer, start: number, end: number): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(buf.toString('utf8', start, end));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Calls `onLine(start, end)` for each non-empty line of a chunk, newest
 * first. Returning false stops the walk.
 */
export function eachLineBackward(buf: Buffer, onLine: (start: number, end: number) => boolean): void {
  let end = buf.length;
  if (end > 0 && buf[end - 1] === 10) end--;
  while (end >= 0) {
    const nl = end === 0 ? -1 : buf.lastIndexOf(10, end - 1);
    if (end > nl + 1 && !onLine(nl + 1, end)) return;
    if (nl < 0) return;
    end = nl;
  }
}
