import { createServer } from 'node:net';
import type { Browser } from 'playwright-core';
import { sharedChromium } from '../../helpers/shared-chromium.ts';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startAuthServer, type AuthServer } from '../../fixtures/oauth/auth-server.ts';
import { startResourceServer, type ResourceServer } from '../../fixtures/oauth/resource-server.ts';
import { startUpstreamWorld, type UpstreamWorld } from './upstream-world.ts';
import type { OAuthStatus } from '../../../main/contract/oauth-status.ts';
import type { UpstreamDetail } from '../../../main/contract/upstreams.ts';
import { until } from './upstream-world.ts';
import { ManualTimers } from '../../helpers/service.ts';

/**
 * The OAuth tests' world: a real authorization server (oidc-provider), a
 * real SDK MCP server requiring its tokens, the real licensed service with
 * its sign-in callback on a free loopback port, and headless Chromium for
 * the person's browser step (oidc-provider's own login and consent pages).
 */
export interface OAuthWorld extends UpstreamWorld {
  as: AuthServer;
  rs: ResourceServer;
  browser: Browser;
  /** the service's token refreshes: they fire when a test moves these on (`advance`), never by the wall clock */
  refreshTimers: ManualTimers;
  /** opens the authorization URL, signs in as `login`, consents; answers the callback page's text */
  signInWithBrowser(url: string, login?: string): Promise<string>;
  status(id: string, waitMs?: number): Promise<OAuthStatus>;
  /**
   * After an upstream's first sign-in: waits for its first listing (every tool
   * quarantined as new, offered to no client) and gives the person's consent
   * to it, as the console's *Offer these N tools* does (docs/oauth.md).
   */
  consent(id: string): Promise<UpstreamDetail>;
}

/**
 * One world for the calling file's tests, handed to `set` once started. Each
 * test starts from the authorization server's default tokens (refreshable,
 * 300 s): a test that failed half way must not leave its short-lived tokens
 * to the next one.
 */
export function useOAuthWorld(set: (w: OAuthWorld) => void): void {
  let world: OAuthWorld | undefined;
  beforeAll(async () => set((world = await startOAuthWorld())), 60_000);
  afterAll(async () => world?.stop());
  beforeEach(() => {
    if (!world) return; // the start failed: its own error says why
    world.as.issueRefresh = true;
    world.as.accessTtl = 300;
  });
}

/**
 * A port for a sign-in callback the service binds later. Chosen below Linux's ephemeral range
 * (32768-60999): a port from that range is handed to outgoing connections too, and one was taken
 * between this check and the sign-in's bind on a busy run ("no loopback port ... is free").
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canBind(port)) return port;
  }
  throw new Error('no free port between 20000 and 32000 on 127.0.0.1');
}

const canBind = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

/** Calls a tool through the gateway as a client would; a thrown error comes back as an error result (its message as text). */
export const callCatching = (W: UpstreamWorld, name: string) =>
  W.mcp().then(async (c) => {
    try {
      return await c.callTool({ name, arguments: {} });
    } catch (e) {
      return { isError: true, content: [{ type: 'text', text: (e as Error).message }] };
    } finally {
      await c.close();
    }
  });

/** The person's consent to an upstream's first listing after its first sign-in (OAuthWorld's `consent`), for any world. */
export async function consentTo(up: UpstreamWorld, id: string): Promise<UpstreamDetail> {
  const d = (await until(
    async () => {
      const got = await up.ok<UpstreamDetail>('GET', `upstreams/${id}`);
      return got.tool_list.some((t) => t.pending?.reason === 'new') ? got : null;
    },
    10_000,
    `the first listing of ${id}`,
  ))!;
  await up.ok('POST', `upstreams/${id}/review`, {
    consent: d.tool_list.filter((t) => t.pending && !t.removed).map((t) => ({ tool: t.tool, hash: t.pending!.hash })),
    prompt_consent: d.prompt_list
      .filter((p) => p.pending && !p.removed)
      .map((p) => ({ prompt: p.prompt, hash: p.pending!.hash })),
  });
  return up.ok<UpstreamDetail>('GET', `upstreams/${id}`);
}

export async function startOAuthWorld(
  o: { dataDir?: string; callbackPort?: number; authServer?: Parameters<typeof startAuthServer>[0] } = {},
): Promise<OAuthWorld> {
  const as = await startAuthServer(o.authServer);
  const rs = await startResourceServer(as.issuer);
  const refreshTimers = new ManualTimers();
  const up = await startUpstreamWorld({
    oauth: { callbackPorts: [o.callbackPort ?? (await freePort())], refreshTimers },
    ...(o.dataDir ? { dataDir: o.dataDir } : {}),
  });
  const browser = await sharedChromium();
  return {
    ...up,
    as,
    rs,
    browser,
    refreshTimers,
    async signInWithBrowser(url, login = 'alice') {
      const context = await browser.newContext();
      const page = await context.newPage();
      try {
        await page.goto(url);
        await page.fill('input[name=login]', login);
        await page.fill('input[name=password]', 'any');
        await page.click('button[type=submit]');
        await page.waitForSelector('button[type=submit]');
        await page.click('button[type=submit]');
        await page.waitForURL(/oauth\/callback/);
        return await page.innerText('body');
      } finally {
        await context.close();
      }
    },
    status: (id, waitMs = 0) => up.ok<OAuthStatus>('POST', `upstreams/${id}/oauth`, { wait_ms: waitMs }),
    consent: (id) => consentTo(up, id),
    async stop() {
      await up.stop();
      await rs.stop();
      await as.stop();
    },
  };
}
