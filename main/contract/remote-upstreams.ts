/**
 * `gatehouse-bridge --remote URL` through the running service (docs/bridge.md,
 * "Remote MCP servers"): the bridge asks the service which upstream the person
 * configured for URL, then speaks MCP to that upstream's own endpoint on the
 * service, where its tools keep the names the remote gave them. No zod and no
 * imports: the bridge carries this file.
 */

const MCP_NAMESPACE = '/wp-json/gatehouse-mcp/v1';

/** `POST {url}` with the client's bearer token: the upstreams this token may use whose URL is that URL. */
export const UPSTREAM_LOOKUP_PATH = `${MCP_NAMESPACE}/upstreams/lookup`;

const VIEW_PREFIX = `${MCP_NAMESPACE}/upstreams/`;
const VIEW_SUFFIX = '/mcp';

/** One upstream's MCP endpoint: only its tools, under the upstream's own names (without `<id>__`). */
export function upstreamMcpPath(id: string): string {
  return `${VIEW_PREFIX}${id}${VIEW_SUFFIX}`;
}

/** The upstream id a path names as `upstreams/<id>/mcp`, or null (the id is checked by whoever serves it). */
export function upstreamOfMcpPath(path: string): string | null {
  if (!path.startsWith(VIEW_PREFIX) || !path.endsWith(VIEW_SUFFIX)) return null;
  const id = path.slice(VIEW_PREFIX.length, -VIEW_SUFFIX.length);
  return id.length > 0 && id.length <= 64 && !id.includes('/') ? id : null;
}

/** Paths of the MCP side beside the main endpoint: the router hands them to the endpoint, which runs its own guards. */
export function isUpstreamMcpSidePath(path: string): boolean {
  return path === UPSTREAM_LOOKUP_PATH || upstreamOfMcpPath(path) !== null;
}

/** The lookup's answer (`{ok: true, data}`): ids only, never a header or another upstream's URL. */
export interface UpstreamLookupAnswer {
  upstreams: Array<{ id: string; mcp_path: string }>;
}
