import type { z } from 'zod';
import type { DocumentStore } from './ports.ts';
import { GatehouseError } from './errors.ts';

/**
 * A DocumentStore held in memory only, with the file store's semantics:
 * updates run one at a time on a copy, are validated against the schema, and
 * become visible only when the whole mutation succeeded. For the core
 * without files: pure-core tests, and the console's tests on the real core.
 */
export class MemoryStore<T> implements DocumentStore<T> {
  private doc: T;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly schema: z.ZodType<T>, initial: unknown = {}) {
    this.doc = schema.parse(initial);
  }

  read(): T {
    return this.doc;
  }

  update<R>(mutate: (draft: T) => R | Promise<R>): Promise<R> {
    const run = this.queue.then(async () => {
      const draft = structuredClone(this.doc);
      const result = await mutate(draft);
      const checked = this.schema.safeParse(draft);
      if (!checked.success) throw new GatehouseError('invalid_value', `the change does not fit the store's schema: ${checked.error.issues[0]?.message ?? 'invalid'}`);
      this.doc = checked.data;
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
