import type { z } from 'zod';
import { decodeCursor } from '../domain/cursor.ts';
import { describeZod } from '../domain/describe-zod.ts';
import { CloudError } from '../errors.ts';

/** Query parameters through a zod schema; a repeated parameter or an unknown one is a 400, not silently taken. */
export function parseQuery<S extends z.ZodType>(
  schema: S,
  query: URLSearchParams,
  known: readonly string[],
): z.infer<S> {
  const raw: Record<string, string> = Object.create(null);
  for (const [k, v] of query) {
    if (!known.includes(k))
      throw new CloudError(
        'invalid_request',
        `unknown query parameter '${k.slice(0, 40)}': this endpoint takes ${known.join(', ') || 'none'}`,
      );
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

/** A page cursor this gateway gave (see domain/cursor.ts), or a 400. */
export function cursorOffset(c: string | undefined, max = 10_000_000): number {
  const o = decodeCursor(c, max);
  if (o === null)
    throw new CloudError(
      'invalid_request',
      'cursor is not one this gateway gave: pass next_cursor from the previous page as it is',
    );
  return o;
}
