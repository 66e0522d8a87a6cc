import { readFile } from 'node:fs/promises';
import type { Protocol } from 'electron';
import { CONSOLE_CSP } from '../contract/csp.ts';
import { APP_SCHEME, contentType, resolveAppFile } from './app-url.ts';

/** Must run before the app is ready: app:// behaves like https (standard, secure origin). */
export function registerAppScheme(protocol: Pick<Protocol, 'registerSchemesAsPrivileged'>): void {
  protocol.registerSchemesAsPrivileged([
    {
      scheme: APP_SCHEME,
      privileges: { standard: true, secure: true, supportFetchAPI: false, corsEnabled: false, stream: false },
    },
  ]);
}

/** Serve the built console (dist-renderer/) on app://console/ with the CSP header; nothing outside that folder. */
export function serveApp(protocol: Pick<Protocol, 'handle'>, rendererDir: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const file = resolveAppFile(rendererDir, request.url);
    const headers = { 'Content-Security-Policy': CONSOLE_CSP, 'X-Content-Type-Options': 'nosniff' };
    if (!file || request.method !== 'GET') return new Response('not found', { status: 404, headers });
    try {
      const body = await readFile(file);
      return new Response(body, { status: 200, headers: { ...headers, 'Content-Type': contentType(file) } });
    } catch {
      return new Response('not found', { status: 404, headers });
    }
  });
}
