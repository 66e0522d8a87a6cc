import { createHash } from 'node:crypto';
import { CLIENT_METADATA_PATH, OAUTH_CALLBACK_PATH, OAUTH_CALLBACK_PORTS } from '../../main/contract/oauth.ts';
import { HttpError } from '../../main/lib/http/http-error.ts';
import type { RouteHandler } from './routes.ts';

/**
 * Gatehouse's OAuth Client ID Metadata Document (draft-ietf-oauth-client-id-
 * metadata-document, which the MCP authorization spec names): an
 * authorization server that supports it fetches this URL, and the URL itself
 * is the client_id. It must be an https URL with a path, stable across
 * restarts and instances, so it comes from the gateway's configured
 * `--public-url`, never from a request's Host (anyone could name any host).
 * Plain http is served only for a loopback base (a test setup on this
 * machine): no authorization server on the internet can reach it anyway.
 */

/** How long an authorization server may reuse the document before fetching it again. */
export const CLIENT_METADATA_MAX_AGE_S = 3600;
export const CLIENT_NAME = 'Gatehouse';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function isLoopbackBase(u: URL): boolean {
  return LOOPBACK_HOSTS.has(u.hostname.toLowerCase());
}

/** The document for a client_id; redirect URIs are the loopback callbacks the desktop app listens on (main/contract/oauth.ts). */
export function clientMetadataDocument(clientId: string): Record<string, unknown> {
  return {
    client_id: clientId,
    client_name: CLIENT_NAME,
    redirect_uris: OAUTH_CALLBACK_PORTS.map((port) => `http://127.0.0.1:${port}${OAUTH_CALLBACK_PATH}`),
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    application_type: 'native',
  };
}

/**
 * The base the document's client_id is built on, or why there is none:
 * the configured public URL when it is https (or http on loopback); without
 * one, a request that reached us on a loopback address (tests, a developer's
 * machine); anything else is refused with what to configure.
 */
export function clientIdBase(publicUrl: string | undefined, requestOrigin: string): URL {
  const why =
    "configure the gateway's public https address with `gatehouse-cloud serve --public-url https://gateway.example`";
  if (publicUrl !== undefined) {
    const u = new URL(publicUrl);
    if (u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackBase(u))) return u;
    throw new HttpError(
      'not_found',
      `Gatehouse's OAuth client metadata needs an https client_id, and the public URL ${u.origin} is plain http: ${why}`,
    );
  }
  const u = new URL(requestOrigin);
  if (u.protocol === 'http:' && isLoopbackBase(u)) return u;
  throw new HttpError(
    'not_found',
    `Gatehouse's OAuth client metadata is served only at a configured public https address: ${why}`,
  );
}

/** `GET /.well-known/gatehouse/oauth-client.json`: public, cacheable, with an ETag for conditional fetches. */
export function clientMetadata(publicUrl: string | undefined): RouteHandler {
  return async ({ origin, headers }) => {
    const base = clientIdBase(publicUrl, origin);
    const text = JSON.stringify(clientMetadataDocument(`${base.origin}${CLIENT_METADATA_PATH}`));
    const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
    const cache = {
      'Cache-Control': `public, max-age=${CLIENT_METADATA_MAX_AGE_S}`,
      ETag: etag,
      'Access-Control-Allow-Origin': '*',
    };
    const ifNoneMatch = headers['if-none-match'];
    if (typeof ifNoneMatch === 'string' && ifNoneMatch.split(',').some((t) => t.trim() === etag))
      return { status: 304, raw: { contentType: 'application/json' }, headers: cache };
    return { raw: { contentType: 'application/json; charset=utf-8', text }, headers: cache };
  };
}
