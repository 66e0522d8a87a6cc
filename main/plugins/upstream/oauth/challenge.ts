import type { FetchLike } from '@modelcontextprotocol/client';
import { clientSdk } from '../client-sdk.ts';
import { VERSION } from '../../../version.ts';

/**
 * What an MCP server's 401 says about signing in to it (RFC 6750 section 3,
 * RFC 9728 section 5.1): where its protected resource metadata is, and which
 * scope the request needed. The metadata URL is the only way to a server that
 * publishes it nowhere well-known; the scope is what a sign-in asks for first
 * (the MCP authorization spec's scope selection), before the metadata's
 * `scopes_supported`.
 */
export interface Challenge {
  resourceMetadataUrl?: string;
  scope?: string;
}

/** How long a sign-in waits for the server's first answer before discovering without it. */
const PROBE_TIMEOUT_MS = 10_000;

export async function challengeOf(response: Response): Promise<Challenge> {
  const { extractWWWAuthenticateParams } = await clientSdk();
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  return {
    ...(resourceMetadataUrl ? { resourceMetadataUrl: resourceMetadataUrl.href } : {}),
    ...(scope ? { scope } : {}),
  };
}

/**
 * Sends the server what a client sends first, without a token, and reads its
 * 401. Any other answer (a server that lets `initialize` through, a redirect,
 * which is never followed) gives no challenge: discovery then uses the
 * well-known locations, as before there was a challenge to read.
 */
export async function probeChallenge(url: string, fetchFn: FetchLike = fetch): Promise<Challenge | null> {
  const response = await fetchFn(url, {
    method: 'POST',
    redirect: 'manual',
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'gatehouse', version: VERSION },
      },
    }),
  });
  await response.body?.cancel().catch(() => undefined);
  return response.status === 401 ? challengeOf(response) : null;
}
