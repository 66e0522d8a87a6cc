/**
 * The MCP client SDK, loaded on first use. It is most of what the upstream
 * code weighs (some 670 kB bundled), and the service needs it only once an
 * upstream connects or signs in, after the service is ready: `serve` never
 * waits for it (docs/upstreams.md, "Connections"). Code that runs before a
 * connection (a view, a status) must not need it; code that handles what the
 * SDK threw can rely on `loadedClientSdk()`, since the SDK is loaded by then.
 */
import type * as ClientModule from '@modelcontextprotocol/client';
import type * as StdioModule from '@modelcontextprotocol/client/stdio';

export type ClientSdk = typeof ClientModule;
export type StdioSdk = typeof StdioModule;

let sdk: ClientSdk | null = null;
let stdio: StdioSdk | null = null;

export async function clientSdk(): Promise<ClientSdk> {
  return (sdk ??= await import('@modelcontextprotocol/client'));
}

export async function stdioSdk(): Promise<StdioSdk> {
  return (stdio ??= await import('@modelcontextprotocol/client/stdio'));
}

/** The SDK if something loaded it already, else null (then no error in hand can be one of its classes). */
export function loadedClientSdk(): ClientSdk | null {
  return sdk;
}
