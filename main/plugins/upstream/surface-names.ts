import { NAMESPACE_SEPARATOR } from '../../contract/upstreams.ts';
import { VIEW_SCHEME } from '../../contract/mcp-apps.ts';
import { unwrapViewUri, viewUriProblem, wrapViewUri } from './views.ts';
import { usableUri } from './usable-uri.ts';

/**
 * How an upstream's prompts and resources are named for clients
 * (docs/upstreams.md, "Prompts and resources"; docs/decisions.md):
 * prompts as `<id>__<name>`, like tools; resource URIs and templates wrapped
 * as `gatehouse-upstream://<id>/<the upstream's URI, unchanged>`. The wrap is
 * a plain prefix: a valid URI stays valid (the upstream's URI becomes the
 * path, its query and fragment ours), a template stays a template whose
 * expansions are the upstream's expansions behind the same prefix, and
 * stripping the prefix gives back the upstream's URI exactly.
 */
export const UPSTREAM_URI_SCHEME = 'gatehouse-upstream';

export const uriPrefix = (id: string): string => `${UPSTREAM_URI_SCHEME}://${id}/`;

/**
 * The URI a client uses for one of the upstream's: an MCP App view (`ui://...`, which hosts render only under
 * `ui://`) as `ui://<id>/...` (views.ts), any other behind the `gatehouse-upstream://<id>/` prefix.
 */
export const wrapUri = (id: string, uri: string): string =>
  uri.startsWith(VIEW_SCHEME) && viewUriProblem(uri) === null ? wrapViewUri(id, uri) : `${uriPrefix(id)}${uri}`;

/** The upstream's own URI behind a wrapped one of this upstream (either form), or null. */
export function unwrapUri(id: string, uri: string): string | null {
  const view = unwrapViewUri(id, uri);
  if (view !== null) return view;
  const prefix = uriPrefix(id);
  return uri.startsWith(prefix) && uri.length > prefix.length ? uri.slice(prefix.length) : null;
}

/** The upstream's own prompt name behind a namespaced one of this upstream, or null. */
export function ownPromptName(id: string, name: string): string | null {
  const prefix = `${id}${NAMESPACE_SEPARATOR}`;
  return name.startsWith(prefix) && name.length > prefix.length ? name.slice(prefix.length) : null;
}

/**
 * Content blocks of a prompt's messages or a read's contents with the
 * upstream's resource URIs wrapped (embedded resources, resource links), so
 * a client can read them back through Gatehouse (`handed` hears each URI, so
 * the surface lets it be read back though the upstream never listed it).
 * Everything else as is.
 */
export function wrapBlockUris(id: string, block: unknown, handed?: (uri: string) => void): unknown {
  if (!block || typeof block !== 'object' || Array.isArray(block)) return block;
  const b = block as Record<string, unknown>;
  if (b.type === 'resource_link' && usableUri(b.uri)) {
    handed?.(b.uri);
    return { ...b, uri: wrapUri(id, b.uri) };
  }
  if (b.type === 'resource' && b.resource && typeof b.resource === 'object') {
    const r = b.resource as Record<string, unknown>;
    if (!usableUri(r.uri)) return b;
    handed?.(r.uri);
    return { ...b, resource: { ...r, uri: wrapUri(id, r.uri) } };
  }
  return b;
}
