import { globalRegistry, type ZodType } from 'zod';

/**
 * A schema built at its first use instead of at import. Building a zod schema costs some 10 µs per node, and the
 * contract's modules hold thousands: a command that opens the core without a service built them all before doing
 * anything, though it uses a few (docs/performance.md, "Start-up").
 *
 * The value returned is the schema itself, not a wrapper: an object whose prototype is a trap that, on the first
 * lookup of any property, builds the schema and then constructs the same schema into this object (zod's
 * constructor run on it with the built definition, which the built schema's children are part of). From then on it
 * is an ordinary zod schema whose own closures refer to it, so `===`, `instanceof`, composing it into other schemas
 * and converting it to JSON Schema (which keys what it has seen by object) all see one object. Referring to it
 * (`z.array(X)` inside another lazy schema, an entry in a table) does not build it; reading anything from it does.
 */
const unbuilt = new WeakSet<object>();

/** True for a lazy schema nothing has read yet; asking does not build it. */
export const isUnbuiltSchema = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && unbuilt.has(value);

/* @__NO_SIDE_EFFECTS__ */
export function lazySchema<T extends ZodType>(build: () => T): T {
  let building = false;
  const schema = Object.create(
    new Proxy(Object.create(null) as object, {
      get: (_target, key) => Reflect.get(hydrate(), key, schema),
      has: (_target, key) => key in hydrate(),
      set: (_target, key, value) => Reflect.set(hydrate(), key, value, schema),
    }),
  ) as T;
  unbuilt.add(schema);
  function hydrate(): T {
    if (building) throw new Error('a lazy schema read itself while it was being built: use z.lazy for a recursive one');
    building = true;
    let built: T;
    try {
      built = build();
    } finally {
      building = false;
    }
    unbuilt.delete(schema);
    const internals = built._zod;
    Object.setPrototypeOf(schema, Object.getPrototypeOf(built));
    // zod's constructors are plain functions that initialise `this` (no class): this one builds into `schema`.
    Reflect.apply(internals.constr, schema, [internals.def]);
    // What zod sets after construction: the schema a clone was made from (.describe(), .meta(), .strict()), and
    // the metadata those register, keyed by object.
    if (internals.parent) schema._zod.parent = internals.parent;
    if (globalRegistry.has(built)) globalRegistry.add(schema, globalRegistry.get(built)!);
    return schema;
  }
  return schema;
}
