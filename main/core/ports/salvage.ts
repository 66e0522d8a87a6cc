import { z } from 'zod';

/**
 * Keeps every part of a stored document that its schema still accepts, so
 * one bad field costs that field, not the whole file: an object keeps its
 * valid fields (a dropped field with a default gets the default), an array
 * or record keeps its valid elements. `dropped` lists the paths that were
 * left out, deepest first, without their values (they may be secrets).
 * Null when not even the top level is an object of the right shape.
 */
export function salvageDocument<T>(schema: z.ZodType<T>, raw: unknown): { data: T; dropped: string[] } | null {
  const dropped: string[] = [];
  const r = salvage(schema, raw, '', dropped);
  return r.ok ? { data: r.value as T, dropped } : null;
}

type Salvaged = { ok: true; value: unknown } | { ok: false };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const join = (path: string, key: string | number) =>
  typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;

function salvage(schema: z.ZodType, raw: unknown, path: string, dropped: string[]): Salvaged {
  const whole = schema.safeParse(raw);
  if (whole.success) return { ok: true, value: whole.data };
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodDefault) inner = inner.unwrap() as z.ZodType;
  const mark = dropped.length;
  const fail = (): Salvaged => {
    // Report the smallest whole thing that was lost, not each of its fields.
    dropped.length = mark;
    dropped.push(path || '(document)');
    return { ok: false };
  };

  if (inner instanceof z.ZodObject && isRecord(raw)) {
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(inner.shape as Record<string, z.ZodType>)) {
      if (!Object.hasOwn(raw, key)) continue;
      const r = salvage(field, raw[key], join(path, key), dropped);
      if (r.ok) out[key] = r.value;
    }
    const again = inner.safeParse(out);
    return again.success ? { ok: true, value: again.data } : fail();
  }
  if (inner instanceof z.ZodArray && Array.isArray(raw)) {
    const element = inner.element as z.ZodType;
    const out: unknown[] = [];
    raw.forEach((v, i) => {
      const r = element.safeParse(v);
      if (r.success) out.push(r.data);
      else dropped.push(join(path, i));
    });
    const again = inner.safeParse(out);
    return again.success ? { ok: true, value: again.data } : fail();
  }
  if (inner instanceof z.ZodRecord && isRecord(raw)) {
    const value = inner.valueType as z.ZodType;
    const key = inner.keyType as z.ZodType;
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of Object.entries(raw)) {
      const r = value.safeParse(v);
      if (key.safeParse(k).success && r.success) out[k] = r.data;
      else dropped.push(join(path, k.slice(0, 80)));
    }
    const again = inner.safeParse({ ...out });
    return again.success ? { ok: true, value: again.data } : fail();
  }
  return fail();
}
