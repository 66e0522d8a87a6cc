import { z } from 'zod';

/** Unwraps optional/default/nullable wrappers to the schema that decides a value's type. */
function base(schema: z.ZodType): z.ZodType {
  let s = schema as z.ZodType & { unwrap?: () => z.ZodType; def?: { innerType?: z.ZodType } };
  for (let i = 0; i < 5; i++) {
    const inner = s.def?.innerType;
    if (!inner) break;
    s = inner as typeof s;
  }
  return s;
}

/**
 * GET inputs travel as a query string: `key=value`, arrays as repeated keys.
 * Each value is turned back into the type its field expects (number,
 * boolean, array) before the action's own schema validates it.
 */
export function queryToInput(params: URLSearchParams, schema: z.ZodType): Record<string, unknown> {
  const shape: Record<string, z.ZodType> = schema instanceof z.ZodObject ? schema.shape : {};
  // Keys come from the client: `__proto__` or `constructor` must stay plain names.
  const out = Object.create(null) as Record<string, unknown>;
  for (const key of new Set(params.keys())) {
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    const values = params.getAll(key);
    const kind = field ? base(field) : undefined;
    if (kind instanceof z.ZodArray) out[key] = values;
    else if (kind instanceof z.ZodNumber) out[key] = values[0] === '' ? undefined : Number(values[0]);
    else if (kind instanceof z.ZodBoolean)
      out[key] = values[0] === 'true' ? true : values[0] === 'false' ? false : values[0];
    else out[key] = values[0];
  }
  return out;
}
