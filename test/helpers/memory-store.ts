import type { z } from 'zod';
import type { DocumentStore } from '../../main/core/ports/ports.ts';

/**
 * The DocumentStore contract without a file, for pure-core tests: updates run
 * one at a time on a copy, are validated when a schema is given, and only
 * then become visible; a mutation that returns a promise is refused, as the
 * file store refuses it. `failWrites` makes every update reject (a full disk)
 * without changing the document; `writes` counts the ones that landed, and
 * `bytes()` is the size the document would have as a file.
 */
export class MemoryStore<T> implements DocumentStore<T> {
  private doc: T;
  private queue: Promise<unknown> = Promise.resolve();
  failWrites = false;
  writes = 0;

  constructor(
    initial: T,
    private readonly schema?: z.ZodType<T>,
  ) {
    this.doc = schema ? schema.parse(initial) : initial;
  }

  read(): T {
    return this.doc;
  }

  update<R>(mutate: (draft: T) => R): Promise<R> {
    const run = this.queue.then(async () => {
      if (this.failWrites) throw new Error('ENOSPC: no space left on device (test)');
      const draft = structuredClone(this.doc);
      const result = mutate(draft);
      if (result instanceof Promise) {
        result.catch(() => {});
        throw new Error('store: an update must change the draft synchronously (its mutation returned a promise)');
      }
      this.doc = this.schema ? this.schema.parse(draft) : draft;
      this.writes++;
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  bytes(): number {
    return Buffer.byteLength(JSON.stringify(this.doc, null, 2));
  }
}
