import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Low } from 'lowdb';
import type { Adapter } from 'lowdb';
import type { z } from 'zod';
import { errorCode, isDiskRefusal } from '../lib/os-error.ts';
import { GatehouseError } from '../core/errors.ts';
import type { DocumentStore } from '../core/ports/ports.ts';
import type { Logger } from '../lib/logger.ts';
import { ensurePrivateDir, removeStaleTemps, writeFileAtomic } from './atomic-write.ts';
import { moveAside } from './corrupt-backup.ts';
import { createLogger } from '../lib/logger.ts';
import { describeIssues } from './zod-issues.ts';
import { stringifyWellFormed } from '../lib/well-formed.ts';
import { trustedDigest, type TrustedDigest } from './trusted-digest.ts';

/**
 * A JSON document (settings, tokens, users, transients...) kept in memory and
 * in one file. Reads are synchronous snapshots; updates run one at a time on a
 * copy, are validated, written atomically, and only then become visible.
 * Only one process writes a store: hold the process lock (process-lock.ts).
 */
export class JsonFileStore<T> implements DocumentStore<T> {
  #db: Low<T>;
  #pending: Array<Job<T>> = [];
  #draining = false;
  #drained: Promise<void> = Promise.resolve();
  // Whether a mutation is running right now. Mutations are synchronous, so whatever runs meanwhile runs inside
  // one: an update() from there would wait for itself forever, so it is refused and fails that mutation. Callbacks
  // that merely started there run after it and are fine. (A flag, not AsyncLocalStorage: that would put Node's
  // promise hooks on every promise of the process.)
  #mutating = false;
  #nested: GatehouseError | null = null;

  private constructor(
    readonly file: string,
    private readonly schema: z.ZodType<T>,
    db: Low<T>,
    /** Where a corrupt or unreadable file found at open was moved to; null when the file was fine. */
    readonly corruptBackup: string | null,
    /** Set when the file had invalid parts: what was dropped (paths), and where the original went. */
    readonly salvaged: { backup: string; dropped: string[] } | null = null,
  ) {
    this.#db = db;
  }

  /**
   * `salvage` gets a file that is JSON but not a valid document and returns
   * what can be kept (see core/ports/salvage.ts); the original is moved aside and
   * the loss is logged as an error. Without it, or when it returns null, the
   * whole file is moved aside and the store starts from `defaults`.
   */
  static async open<T>(opts: {
    file: string;
    schema: z.ZodType<T>;
    defaults: () => T;
    log?: Logger;
    salvage?: (raw: unknown) => { data: T; dropped: string[] } | null;
    /** a large document: the text we wrote is taken back without validating it again (trusted-digest.ts) */
    trustOwnWrites?: boolean;
    /** with trustOwnWrites: the schema's name among the fingerprints the build computed (trusted-digest.ts) */
    fingerprintName?: string;
  }): Promise<JsonFileStore<T>> {
    const log = opts.log ?? createLogger();
    await ensurePrivateDir(dirname(opts.file));
    await removeStaleTemps(opts.file);

    const digest = opts.trustOwnWrites ? trustedDigest(opts.file, opts.schema, opts.fingerprintName) : null;
    const adapter = new JsonAdapter<T>(opts.file, digest);
    const loaded = await load(opts.file, opts.schema, digest);
    let corruptBackup: string | null = null;
    let salvaged: { backup: string; dropped: string[] } | null = null;
    let data: T;
    let mustWrite: boolean;
    const kept = loaded.kind === 'bad' && loaded.json !== undefined && opts.salvage ? opts.salvage(loaded.json) : null;
    const rescued = kept && opts.schema.safeParse(kept.data).success ? kept : null;

    if (loaded.kind === 'ok') {
      data = loaded.data;
      mustWrite = loaded.rewrite === true;
    } else if (rescued) {
      const backup = await moveAside(opts.file).catch((e: unknown) => {
        throw new GatehouseError(
          'store_corrupt',
          `${opts.file} has invalid parts and could not be moved aside (${(e as Error).message}); fix or remove it, then start again`,
          { file: opts.file },
        );
      });
      salvaged = { backup, dropped: rescued.dropped };
      log.error(
        `store: ${opts.file} had invalid parts (${loaded.kind === 'bad' ? loaded.reason : ''}); kept everything else and dropped: ${rescued.dropped.join(', ')}. The original is in ${backup}.`,
        {
          file: opts.file,
          backup,
          dropped: rescued.dropped,
        },
      );
      data = opts.schema.parse(rescued.data);
      mustWrite = true;
    } else if (loaded.kind === 'missing') {
      data = validDefaults(opts.schema, opts.defaults);
      mustWrite = true;
    } else {
      // Never overwrite what we could not read: keep it beside the store for a person to look at.
      corruptBackup = await moveAside(opts.file).catch((e: unknown) => {
        throw new GatehouseError(
          'store_corrupt',
          `${opts.file} is ${loaded.reason} and could not be moved aside (${(e as Error).message}); fix or remove it, then start again`,
          { file: opts.file },
        );
      });
      log.error(
        `store: ${opts.file} was ${loaded.reason}; moved it to ${corruptBackup} and started from defaults. Your earlier data is in that file.`,
        {
          file: opts.file,
          backup: corruptBackup,
          reason: loaded.reason,
        },
      );
      data = validDefaults(opts.schema, opts.defaults);
      mustWrite = true;
    }

    const db = new Low<T>(adapter, deepFreeze(data));
    if (mustWrite) await db.write();
    return new JsonFileStore(opts.file, opts.schema, db, corruptBackup, salvaged);
  }

  /** The committed document. Frozen: change it through update(). */
  read(): T {
    return this.#db.data;
  }

  /**
   * Runs `mutate` on a private copy, validates the result and writes it before
   * it becomes what read() returns. `mutate` changes the draft synchronously:
   * one that returns a promise is refused (internal_error), as is an update()
   * called from inside a mutation of the same store, which fails that mutation
   * too (it would wait for itself). An error thrown by `mutate` is passed
   * through unchanged; a result the schema refuses rejects with invalid_value.
   * Either way that update changes nothing, in memory or on disk.
   *
   * Updates run one at a time, in call order. Those that queue up while a
   * write is in flight are applied one after another and committed with one
   * write (group commit): each promise still resolves only once its change is
   * on disk, and a failed write rejects every update it carried.
   */
  update<R>(mutate: (draft: T) => R): Promise<R> {
    if (this.#mutating) {
      const nested = new GatehouseError(
        'internal_error',
        'store: update() called from inside an update of the same store; change the draft instead',
      );
      this.#nested ??= nested;
      const refused = Promise.reject(nested);
      // the mutation it was called from fails with the same error, whether or not its caller looks at this one
      refused.catch(() => {});
      return refused;
    }
    return new Promise<R>((resolve, reject) => {
      this.#pending.push({ mutate, resolve: resolve as (v: unknown) => void, reject });
      if (!this.#draining) this.#drain();
    });
  }

  /** Resolves once every update queued so far has settled. */
  async flush(): Promise<void> {
    while (this.#draining) await this.#drained;
  }

  #drain(): void {
    this.#draining = true;
    this.#drained = (async () => {
      // Start on a later tick: the caller's update() returns before its mutation runs, and
      // updates issued in the same tick share one write.
      await Promise.resolve();
      try {
        while (this.#pending.length > 0) await this.#commit(this.#pending.splice(0, MAX_BATCH));
      } finally {
        this.#draining = false;
      }
    })();
  }

  async #commit(batch: Array<Job<T>>): Promise<void> {
    let base = this.#db.data;
    const applied: Array<{ job: Job<T>; result: unknown }> = [];
    for (const job of batch) {
      try {
        base = await this.#apply(base, job, (result) => applied.push({ job, result }));
      } catch (e) {
        job.reject(e);
      }
    }
    if (applied.length === 0) return;
    try {
      await this.#db.adapter.write(base);
    } catch (e) {
      // The disk refusing (ENOSPC, EIO, ...) is not a bug of ours: say so, with the code a caller can act on.
      const err = isDiskRefusal(e)
        ? new GatehouseError(
            'storage_unavailable',
            `store: the disk refused to save ${this.file} (${errorCode(e)}); the change was not applied: free space on the disk that holds the data dir and try again`,
            { file: this.file },
          )
        : new GatehouseError(
            'internal_error',
            `store: could not save ${this.file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); the change was not applied`,
            { file: this.file },
          );
      for (const { job } of applied) job.reject(err);
      return;
    }
    this.#db.data = base;
    for (const { job, result } of applied) job.resolve(result);
  }

  /** One mutation on a copy of `base`; returns the validated, frozen next document. */
  async #apply(base: T, job: Job<T>, onResult: (result: unknown) => void): Promise<T> {
    const draft = structuredClone(base) as T;
    let result: unknown;
    this.#mutating = true;
    this.#nested = null;
    try {
      result = job.mutate(draft);
    } finally {
      this.#mutating = false;
    }
    const nested = this.#nested;
    this.#nested = null;
    if (nested) throw nested;
    if (isThenable(result)) {
      result.then(undefined, () => {});
      throw new GatehouseError(
        'internal_error',
        'store: an update must change the draft synchronously (its mutation returned a promise); nothing was changed',
      );
    }
    const parsed = this.schema.safeParse(draft);
    if (!parsed.success) {
      const { text, issues } = describeIssues(parsed.error);
      throw new GatehouseError('invalid_value', `invalid value: ${text}`, { issues });
    }
    onResult(result);
    return deepFreeze(parsed.data);
  }
}

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  (typeof v === 'object' || typeof v === 'function') &&
  v !== null &&
  typeof (v as { then?: unknown }).then === 'function';

interface Job<T> {
  mutate: (draft: T) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}
// Bounds how much work one write (and one failed write) can carry.
const MAX_BATCH = 500;

type Loaded<T> =
  { kind: 'ok'; data: T; rewrite?: true } | { kind: 'missing' } | { kind: 'bad'; reason: string; json?: unknown };

async function load<T>(file: string, schema: z.ZodType<T>, digest: TrustedDigest | null): Promise<Loaded<T>> {
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'bad', reason: `unreadable (${code ?? (e as Error).message})` };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { kind: 'bad', reason: raw.trim() === '' ? 'empty' : 'not valid JSON' };
  }
  if (digest && (await digest.matches(raw))) return { kind: 'ok', data: json as T };
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    return { kind: 'bad', reason: `not a valid document (${describeIssues(parsed.error).text})`, json };
  if (!digest) return { kind: 'ok', data: parsed.data };
  // Valid and exactly what we would write: the next open trusts it. Valid in an older form (a version before a
  // renamed value or a new default): written once in the current form, so later opens need not validate it again.
  if (serialized(parsed.data) !== raw) return { kind: 'ok', data: parsed.data, rewrite: true };
  await digest.wrote(raw);
  return { kind: 'ok', data: parsed.data };
}

const serialized = (data: unknown) => `${stringifyWellFormed(data, 2)}\n`;

function validDefaults<T>(schema: z.ZodType<T>, defaults: () => T): T {
  const parsed = schema.safeParse(defaults());
  // A bug in the caller, not bad user data: say so plainly.
  if (!parsed.success)
    throw new GatehouseError(
      'internal_error',
      `store defaults do not match the schema: ${describeIssues(parsed.error).text}`,
    );
  return parsed.data;
}

/** lowdb adapter: pretty JSON, written with writeFileAtomic (temp + fsync + rename, 0600). */
class JsonAdapter<T> implements Adapter<T> {
  constructor(
    private readonly file: string,
    private readonly digest: TrustedDigest | null = null,
  ) {}
  /** Unvalidated; JsonFileStore.open loads through load() instead, which tells missing from corrupt. */
  async read(): Promise<T | null> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as T;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }
  async write(data: T): Promise<void> {
    const text = serialized(data);
    await writeFileAtomic(this.file, text, { mode: 0o600 });
    await this.digest?.wrote(text);
  }
}

function deepFreeze<V>(value: V): V {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
