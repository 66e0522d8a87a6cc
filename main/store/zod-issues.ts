import type { z } from 'zod';

/**
 * A short, human sentence for a zod failure that names the fields
 * ("rate_limit: Invalid input: expected number, received string"). It never
 * includes the offending values, which may be secrets.
 */
export function describeIssues(
  error: z.ZodError,
  max = 3,
): { text: string; issues: Array<{ path: string; message: string }> } {
  const issues = error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(document)', message: i.message }));
  const shown = issues.slice(0, max).map((i) => `${i.path}: ${i.message}`);
  if (issues.length > max) shown.push(`and ${issues.length - max} more`);
  return { text: shown.join('; '), issues };
}
