import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lazySchema } from '../../main/contract/lazy-schema.ts';

// main/contract/lazy-schema.ts: a schema built at its first use is, from then on, the schema itself.

/** The same schema, eager and lazy, with a count of how often the lazy one was built. */
function both<T extends z.ZodType>(make: () => T) {
  let builds = 0;
  const lazy = lazySchema(() => {
    builds++;
    return make();
  });
  return { eager: make(), lazy, builds: () => builds };
}

describe('lazySchema', () => {
  it('builds nothing until something is read from it, then once', () => {
    const inner = both(() => z.object({ n: z.number().int() }));
    const outer = both(() => z.object({ inner: inner.lazy, list: z.array(inner.lazy) }));
    const table = { input: outer.lazy };
    expect([inner.builds(), outer.builds(), table.input === outer.lazy]).toEqual([0, 0, true]);
    expect(outer.lazy.parse({ inner: { n: 1 }, list: [] })).toEqual({ inner: { n: 1 }, list: [] });
    expect([inner.builds(), outer.builds()]).toEqual([1, 1]);
    outer.lazy.parse({ inner: { n: 2 }, list: [{ n: 3 }] });
    expect([inner.builds(), outer.builds()]).toEqual([1, 1]);
  });

  it('parses, refuses and converts to JSON Schema as the eager schema does, metadata and wrappers included', () => {
    const name = both(() => z.string().min(1).describe('a name'));
    const doc = both(() =>
      z
        .object({
          name: name.lazy,
          tags: z.array(z.string()).optional(),
          mode: z.enum(['a', 'b']).default('a'),
          note: name.lazy.optional().meta({ title: 'note' }),
        })
        .strict(),
    );
    const eagerDoc = z
      .object({
        name: name.eager,
        tags: z.array(z.string()).optional(),
        mode: z.enum(['a', 'b']).default('a'),
        note: name.eager.optional().meta({ title: 'note' }),
      })
      .strict();
    for (const value of [{ name: 'x' }, { name: '' }, { name: 'x', extra: 1 }, { name: 'x', mode: 'c' }, null]) {
      const [a, b] = [doc.lazy.safeParse(value), eagerDoc.safeParse(value)];
      expect({ ok: a.success, data: a.data, issues: a.error?.issues }).toEqual({
        ok: b.success,
        data: b.data,
        issues: b.error?.issues,
      });
    }
    for (const io of ['input', 'output'] as const)
      expect(z.toJSONSchema(doc.lazy, { io })).toEqual(z.toJSONSchema(eagerDoc, { io }));
    expect(z.toJSONSchema(name.lazy)).toEqual(z.toJSONSchema(name.eager));
    expect(z.toJSONSchema(name.lazy).description).toBe('a name');
  });

  it('is one object: identity, instanceof, its methods and what is derived from it', () => {
    const { lazy } = both(() => z.object({ id: z.string(), n: z.number().optional() }));
    expect(lazy instanceof z.ZodObject).toBe(true);
    expect(lazy.shape.id instanceof z.ZodString).toBe(true);
    const picked = lazy.pick({ id: true }).extend({ more: z.boolean() });
    expect(picked.parse({ id: 'a', n: 1, more: true })).toEqual({ id: 'a', more: true });
    const seen = new WeakMap([[lazy, 'the same']]);
    expect(seen.get(lazy)).toBe('the same');
    expect(lazy.optional().unwrap()).toBe(lazy);
    // Its own closures are its own: converting a wrapper of it finds it among what was seen.
    const opt = lazySchema(() => z.string().optional());
    expect(z.toJSONSchema(z.object({ opt }))).toEqual(z.toJSONSchema(z.object({ opt: z.string().optional() })));
  });

  it('says so when a schema reads itself while it is built, and builds again after a build that failed', () => {
    const self: z.ZodType = lazySchema(() => z.object({ again: self.optional() }));
    expect(() => self.parse({})).toThrow(/read itself while it was being built: use z.lazy/);
    let fail = true;
    const flaky = lazySchema(() => {
      if (fail) throw new Error('not yet');
      return z.number();
    });
    expect(() => flaky.parse(1)).toThrow('not yet');
    fail = false;
    expect(flaky.parse(1)).toBe(1);
  });

  it('leaves recursion to z.lazy, which reads the schema only when it parses', () => {
    type Node = { name: string; children: Node[] };
    const Tree: z.ZodType<Node> = lazySchema(() =>
      z.object({ name: z.string(), children: z.array(z.lazy(() => Tree)) }),
    );
    expect(Tree.parse({ name: 'a', children: [{ name: 'b', children: [] }] })).toEqual({
      name: 'a',
      children: [{ name: 'b', children: [] }],
    });
    expect(Tree.safeParse({ name: 'a', children: [{ name: 1, children: [] }] }).success).toBe(false);
  });
});
