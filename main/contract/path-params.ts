/** A route's `:param`s filled from the input (URL-encoded), and what is left of the input. */
export function fillPath(
  template: string,
  input: Record<string, unknown>,
): { path: string; rest: Record<string, unknown> } {
  const rest = { ...input };
  const path = template.replace(/:([a-z_]+)/g, (_m, key: string) => {
    const value = rest[key];
    delete rest[key];
    return encodeURIComponent(String(value ?? ''));
  });
  return { path, rest };
}
