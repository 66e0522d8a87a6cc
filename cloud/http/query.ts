import type { z } from 'zod';
import { describeZod } from '../domain/describe-zod.ts';
import { CloudError } from '../errors.ts';

/** Query parameters through a zod schema; a repeated parameter or an unknown one is a 400, not silently taken. */
export function parseQuery<S extends z.ZodType>(schema: S, query: URLSearchParams, known: readonly string[]): z.infer<S> {
  const raw: Record<string, string> = Object.create(null);
  for (const [k, v] of query) {
    if (!known.includes(k)) throw new CloudError('invalid_request', `unknown query parameter '${k.slice(0, 40)}': this endpoint takes ${known.join(', ') || 'none'}`);
    if (k in raw) throw new CloudError('invalid_request', `query parameter '${k}' is given twice`);
    raw[k] = v;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new CloudError('invalid_request', describeZod(parsed.error));
  return parsed.data;
}

/** A JSON body through a zod schema: a clear 400 naming the fields. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new CloudError('invalid_request', describeZod(parsed.error));
  return parsed.data;
}
