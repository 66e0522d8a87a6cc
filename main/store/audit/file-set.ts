import type { FileHandle } from 'node:fs/promises';
import { chmod, mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../lib/logger.ts';
import { auditFileName, parseAuditFileName, sidecarName } from './files.ts';
import { readSidecar, scanSummary, writeSidecar } from './sidecar.ts';
import type { FileSummary } from './summary.ts';
import { emptySummary } from './summary.ts';

/** One audit file and what is known about it. `summary.bytes` is how far readers may read. */
export interface AuditFileRecord {
  seq: number;
  createdMs: number;
  name: string;
  path: string;
  summary: FileSummary;
}

/** What a reader scans: a file and the length of it that held acknowledged entries when the scan began. */
export interface ScanFile {
  seq: number;
  path: string;
  bytes: number;
  summary: FileSummary;
}

/**
 * The audit folder: which files exist, in order, with their summaries. The
 * writer adds files and grows the newest; sweep removes old ones; readers take
 * a snapshot and never see a half-acknowledged write.
 */
export class AuditFileSet {
  private files: AuditFileRecord[] = [];
  private nextSeq = 1;

  private constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  /**
   * Reads the folder (creating it 0700). Summaries come from sidecars when
   * they match the file's size, otherwise from a scan, which also writes a
   * fresh sidecar. Returns the newest file when appending to it is safe: it
   * ends with a whole line and has room left.
   */
  static async load(
    dir: string,
    log: Logger,
    maxFileBytes: number,
  ): Promise<{ set: AuditFileSet; appendable: AuditFileRecord | null }> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700).catch(() => undefined);
    const set = new AuditFileSet(dir, log);
    const found: Array<{ name: string; seq: number; createdMs: number }> = [];
    for (const name of await readdir(dir)) {
      const parsed = parseAuditFileName(name);
      if (parsed) found.push({ name, ...parsed });
    }
    found.sort((a, b) => a.seq - b.seq);
    let appendable: AuditFileRecord | null = null;
    for (const [i, f] of found.entries()) {
      const path = join(dir, f.name);
      let size = (await stat(path)).size;
      const isNewest = i === found.length - 1;
      let summary = await readSidecar(join(dir, sidecarName(f.name)), size);
      let torn = summary !== null && summary.bytes !== size;
      if (!summary) {
        const scanned = await scanSummary(path, size);
        summary = scanned.summary;
        torn = scanned.torn;
        if (!isNewest && !torn)
          await writeSidecar(join(dir, sidecarName(f.name)), summary, size).catch(() => undefined);
      }
      if (torn) {
        // A write cut short by a kill: its entries were never acknowledged (a decision waits for sync()).
        // Cut the fragment off, so every line of every file parses (jq reads them) and appending can go on.
        const cut = await cutTornTail(path, summary.bytes, size, log, f.name);
        if (cut) {
          size = summary.bytes;
          torn = false;
          if (!isNewest) await writeSidecar(join(dir, sidecarName(f.name)), summary, size).catch(() => undefined);
        } else {
          await writeSidecar(join(dir, sidecarName(f.name)), summary, size).catch(() => undefined);
        }
      }
      const rec: AuditFileRecord = { seq: f.seq, createdMs: f.createdMs, name: f.name, path, summary };
      set.files.push(rec);
      set.nextSeq = f.seq + 1;
      if (isNewest && !torn && size < maxFileBytes) appendable = rec;
    }
    return { set, appendable };
  }

  /** Creates the next file (0600, must not exist yet) and returns it open for appending. */
  async create(nowMs: number): Promise<{ rec: AuditFileRecord; fh: FileHandle }> {
    const seq = this.nextSeq++;
    const name = auditFileName(nowMs, seq);
    const path = join(this.dir, name);
    const fh = await open(path, 'ax', 0o600);
    const rec: AuditFileRecord = { seq, createdMs: nowMs, name, path, summary: emptySummary() };
    this.files.push(rec);
    return { rec, fh };
  }

  /** Stores a closed file's summary beside it, so the next start need not read the file. */
  async seal(rec: AuditFileRecord): Promise<void> {
    try {
      const size = (await stat(rec.path)).size;
      await writeSidecar(join(this.dir, sidecarName(rec.name)), rec.summary, size);
    } catch (e) {
      this.log.warn('audit: could not write a file summary; it is rebuilt on the next start', {
        file: rec.name,
        error: String(e),
      });
    }
  }

  list(): readonly AuditFileRecord[] {
    return this.files;
  }

  /** Newest first, with lengths frozen now: entries written later are beyond every reader's end. */
  snapshot(): ScanFile[] {
    const out: ScanFile[] = [];
    for (let i = this.files.length - 1; i >= 0; i--) {
      const f = this.files[i] as AuditFileRecord;
      out.push({ seq: f.seq, path: f.path, bytes: f.summary.bytes, summary: f.summary });
    }
    return out;
  }

  /** Forgets a file at once (new readers skip it) and deletes it and its sidecar. */
  async remove(rec: AuditFileRecord): Promise<void> {
    this.files = this.files.filter((f) => f !== rec);
    for (const p of [rec.path, join(this.dir, sidecarName(rec.name))]) {
      await unlink(p).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'ENOENT') throw e;
      });
    }
  }
}

/** Truncates an audit file to its last whole line; false (and a warning) when the file system refuses. */
async function cutTornTail(path: string, keep: number, size: number, log: Logger, name: string): Promise<boolean> {
  try {
    const fh = await open(path, 'r+');
    try {
      await fh.truncate(keep);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    log.warn('audit: a file ended with an incomplete line (a write cut short by a crash); the fragment was removed', {
      file: name,
      bytes: size - keep,
    });
    return true;
  } catch (e) {
    log.warn('audit: a file ends with an incomplete line (a write was cut short); readers skip it', {
      file: name,
      error: String(e),
    });
    return false;
  }
}
