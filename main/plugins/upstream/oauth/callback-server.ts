import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAUTH_CALLBACK_PATH, OAUTH_CALLBACK_PORTS } from '../../../contract/oauth.ts';
import { GatehouseError } from '../../../core/errors.ts';

/**
 * The loopback redirect target of a sign-in (RFC 8252 section 7.3): bound to
 * 127.0.0.1 only, on the first free port of a fixed small set that every
 * registration names (so a stored registration stays valid), answering only
 * GET OAUTH_CALLBACK_PATH. Whatever browser on this machine finishes the
 * sign-in reaches it. It runs while a sign-in waits and closes after.
 */

export interface CallbackAnswer {
  status: number;
  /** one short sentence for the browser tab (HTML-escaped here) */
  message: string;
}
export type CallbackHandler = (params: URLSearchParams) => Promise<CallbackAnswer>;

export interface CallbackServer {
  port: number;
  redirectUri: string;
  /** the redirect URIs of every port of the set (what a registration names) */
  redirectUris: string[];
  close(): Promise<void>;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (message: string) =>
  `<!doctype html><meta charset="utf-8"><title>Gatehouse sign-in</title><p>${escapeHtml(message)}</p>`;
export const redirectUriFor = (port: number) => `http://127.0.0.1:${port}${OAUTH_CALLBACK_PATH}`;

function listen(server: Server, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const fail = () => resolve(false);
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => (server.off('error', fail), resolve(true)));
  });
}

export async function startCallbackServer(
  handle: CallbackHandler,
  ports: readonly number[] = OAUTH_CALLBACK_PORTS,
): Promise<CallbackServer> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const send = (a: CallbackAnswer) =>
      res
        .writeHead(a.status, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
          // The server closes soon after a sign-in ends: a kept-alive connection would be stale for the next sign-in's redirect.
          connection: 'close',
        })
        .end(page(a.message));
    if (req.method !== 'GET' || url.pathname !== OAUTH_CALLBACK_PATH)
      return void send({ status: 404, message: 'Not found.' });
    handle(url.searchParams).then(send, () =>
      send({ status: 500, message: 'The sign-in could not be completed; see Gatehouse for why.' }),
    );
  });
  for (const port of ports) {
    if (await listen(server, port)) {
      const bound = (server.address() as AddressInfo).port;
      return {
        port: bound,
        redirectUri: redirectUriFor(bound),
        redirectUris: ports.map((p) => redirectUriFor(p === 0 ? bound : p)),
        close: () =>
          new Promise((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      };
    }
  }
  throw new GatehouseError(
    'service_unavailable',
    `no loopback port for the sign-in callback is free (tried ${ports.join(', ')} on 127.0.0.1); close what uses them and try again`,
  );
}
