import type { z } from 'zod';

/** A zod error as one short line for a person: `field: problem; field: problem` (at most 5). */
export function describeZod(error: z.ZodError): string {
  const parts = error.issues.slice(0, 5).map((i) => {
    const path = i.path
      .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
      .join('.')
      .slice(0, 80);
    return path ? `${path}: ${i.message}` : i.message;
  });
  const more = error.issues.length > 5 ? ` (and ${error.issues.length - 5} more)` : '';
  // eslint-disable-next-line no-control-regex -- stripping control characters is the point
  return `${parts.join('; ')}${more}`.replace(/[\x00-\x1f\x7f]/g, ' ');
}
