/**
 * An action's HTTP route without its schemas (main/contract/action-routes.ts holds every action's): plain data, so
 * that an HTTP client can call the service without loading the contract's zod schemas (the CLI talking to a running
 * service, main/cli/admin-client.ts).
 */
export interface ActionRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** from the service's base URL: the admin API's or the local REST's prefix, then the path with its `:param`s */
  path: string;
  /** the local REST, answering in its own envelope (`{success, ...}`) */
  rest?: true;
  stream?: 'download' | 'events';
}

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
