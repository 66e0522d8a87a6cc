import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { StagedPayload } from '../contract/staged.ts';
import type { Logger } from '../lib/logger.ts';
import type { StagedStore } from '../core/staging/staged-store.ts';
import { stringifyWellFormed } from '../lib/well-formed.ts';
import { ensurePrivateDir, removeStaleTemps, writeFileAtomic } from './atomic-write.ts';
import { moveAside } from './corrupt-backup.ts';
import { describeIssues } from './zod-issues.ts';

/** `stg_` + the short id alphabet: nothing else is ever a file name here. */
const ID_RE = /^stg_[a-z0-9]{1,40}$/;
const FILE_RE = /^(stg_[a-z0-9]{1,40})\.json$/;
const TEMP_RE = /^\.(stg_[a-z0-9]{1,40}\.json)\.tmp-/;

/**
 * Staged writes on disk: one small JSON file per write in `<dataDir>/staged/`,
 * replaced atomically (temp + fsync + rename + folder fsync) on every
 * transition. Staging or deciding one write touches one file, whatever the
 * number of others; the whole folder is read once, at open.
 */
export class StagedFiles implements StagedStore {
  private constructor(
    readonly dir: string,
    private records: readonly StagedPayload[],
    /** files that could not be read, moved aside: for the health report */
    readonly problems: readonly string[],
  ) {}

  static async open(opts: { dir: string; log: Logger }): Promise<StagedFiles> {
    await ensurePrivateDir(opts.dir);
    const records: StagedPayload[] = [];
    const problems: string[] = [];
    const names = await readdir(opts.dir);
    // Temp files of writes killed before their rename, new records included.
    const temps = new Set(names.map((n) => TEMP_RE.exec(n)?.[1]).filter((n): n is string => !!n));
    for (const base of temps) await removeStaleTemps(join(opts.dir, base));
    for (const name of names) {
      const m = FILE_RE.exec(name);
      if (!m) continue;
      const file = join(opts.dir, name);
      const problem = await readRecord(file, m[1] as string, records);
      if (!problem) continue;
      const backup = await moveAside(file).catch((e: unknown) => `(could not move it aside: ${(e as Error).message})`);
      const message = `staged write file ${name} is ${problem}; moved it to ${backup}`;
      opts.log.error(`staging: ${message}`, { file, backup });
      problems.push(message);
    }
    return new StagedFiles(opts.dir, records, problems);
  }

  /** Handed over once (to the Staging index), so the records are not held in memory twice. */
  loaded(): readonly StagedPayload[] {
    const out = this.records;
    this.records = [];
    return out;
  }

  async put(item: StagedPayload): Promise<void> {
    await writeFileAtomic(this.fileOf(item.id), `${stringifyWellFormed(item)}\n`, { mode: 0o600 });
  }

  async remove(id: string): Promise<void> {
    await unlink(this.fileOf(id)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
  }

  private fileOf(id: string): string {
    // Ids are ours (shortId), never a client's; still, nothing but an id may become a path.
    if (!ID_RE.test(id)) throw new Error(`staged-files: '${id.slice(0, 60)}' is not a staged write id`);
    return join(this.dir, `${id}.json`);
  }
}

/** Reads one record into `out`; returns what is wrong with the file, or null. */
async function readRecord(file: string, id: string, out: StagedPayload[]): Promise<string | null> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    return e instanceof SyntaxError
      ? 'not valid JSON'
      : `unreadable (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
  const parsed = StagedPayload.safeParse(json);
  if (!parsed.success) return `not a valid staged write (${describeIssues(parsed.error).text})`;
  if (parsed.data.id !== id) return `named ${id} but holds '${parsed.data.id.slice(0, 60)}'`;
  out.push(parsed.data);
  return null;
}
