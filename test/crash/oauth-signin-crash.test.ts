import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { sharedChromium } from '../helpers/shared-chromium.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OAuthStatus } from '../../main/contract/oauth-status.ts';
import { startGateway, type Gateway } from '../cloud-client/helpers/world.ts';
import { cliJson, collect, dirArgs, runCli, spawnCli, startServe, type Served } from '../cli/cli-harness.ts';
import { startAuthServer, type AuthServer } from '../fixtures/oauth/auth-server.ts';
import { startResourceServer, type ResourceServer } from '../fixtures/oauth/resource-server.ts';
import { freePort } from '../plugins/upstream/oauth-helpers.ts';
import { until } from '../plugins/upstream/upstream-world.ts';

/**
 * SIGKILL of the service in the middle of a sign-in (the browser step done,
 * the callback not yet delivered): after the restart no half-stored
 * credential is left (no token set in the vault, the upstream signed out),
 * the old callback is refused, and the next sign-in works. The CLI drives it
 * as a person would: `upstreams login ID --no-browser` prints the URL.
 */
let gw: Gateway;
let as: AuthServer;
let rs: ResourceServer;
let browser: Browser;
let dir: string;
let served: Served | null = null;
const env: NodeJS.ProcessEnv = {};

beforeAll(async () => {
  gw = await startGateway();
  as = await startAuthServer();
  rs = await startResourceServer(as.issuer);
  browser = await sharedChromium();
  dir = await mkdtemp(join(tmpdir(), 'gh-oauthcrash-'));
  env.GATEHOUSE_TEST_OAUTH_CALLBACK_PORT = String(await freePort());
}, 120_000);
afterAll(async () => {
  await served?.stop('SIGKILL');
  await rs?.stop();
  await as?.stop();
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `upstreams login` in the background and answers the authorization URL it printed. */
async function startLogin(): Promise<{ url: string; done: ReturnType<typeof collect> }> {
  const child = spawnCli(['upstreams', 'login', 'remote', '--no-browser', ...dirArgs(dir)], env);
  child.stdin.end();
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const done = collect(child);
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const url = await until(() => out.match(/^(http\S+)$/m)?.[1], 20_000, 'the authorization URL').catch((e: Error) => {
    throw new Error(`${e.message}\nstdout: ${out}\nstderr: ${err}`);
  });
  return { url: url!, done };
}

/** Login and consent in Chromium; with `hold`, the redirect to the callback is captured instead of delivered. */
async function browserStep(url: string, hold: boolean): Promise<string> {
  const context = await browser.newContext();
  const page = await context.newPage();
  let callback = '';
  if (hold) as.rewriteCallback = (u) => ((callback = u.href), u.searchParams.set('held', '1'), (u.port = '9'));
  try {
    await page.goto(url);
    await page.fill('input[name=login]', 'alice');
    await page.fill('input[name=password]', 'any');
    await page.click('button[type=submit]');
    await page.waitForSelector('button[type=submit]');
    await page.click('button[type=submit]');
    if (!hold) await page.waitForURL(/oauth\/callback/);
    else await until(() => callback, 10_000, 'the held callback');
    return hold ? callback : await page.innerText('body');
  } finally {
    as.rewriteCallback = null;
    await context.close();
  }
}

const vaultKeys = async () =>
  Object.keys(
    (JSON.parse(await readFile(join(dir, 'vault.json'), 'utf8')) as { secrets: Record<string, string> }).secrets,
  );

it('a sign-in cut by SIGKILL leaves no half credential, its callback is refused after the restart, and the next sign-in works', async () => {
  served = await startServe(dir, [], env);
  await cliJson(dir, ['cloud', 'connect', '--url', gw.url], env);
  const lic = await gw.license('pro');
  const activate = spawnCli(['cloud', 'activate', '-', ...dirArgs(dir), '--json'], env);
  activate.stdin.end(`${lic.license_key}\n`);
  expect((await collect(activate)).code).toBe(0);
  const added = await runCli(
    ['upstreams', 'add', 'remote', '--url', rs.url('/mcp'), '--oauth', '--scopes', 'mcp:read', ...dirArgs(dir)],
    env,
  );
  expect(added.code, added.stderr).toBe(0);
  expect(added.stdout).toMatch(/gatehouse upstreams login remote/);

  const first = await startLogin();
  const held = await browserStep(first.url, true);
  expect((await vaultKeys()).some((k) => k.startsWith('oauth-flow/'))).toBe(true);
  await served.stop('SIGKILL');
  served = null;
  expect((await first.done).code).not.toBe(0);

  served = await startServe(dir, [], env);
  expect((await vaultKeys()).some((k) => k.startsWith('oauth-tokens/'))).toBe(false);
  const status = await cliJson<{ oauth: OAuthStatus }>(dir, ['upstreams', 'show', 'remote'], env);
  expect(status.oauth.state).not.toBe('signed_in');
  // The old callback reaches the restarted service's port only while a new sign-in waits; its state is unknown there.
  const second = await startLogin();
  const stale = await fetch(held);
  expect(stale.status).toBe(400);
  expect(await stale.text()).toMatch(/unknown or has expired/);
  expect(await browserStep(second.url, false)).toMatch(/Signed in/);
  const done = await second.done;
  expect(done.code, done.stderr).toBe(0);
  expect(done.stdout).toMatch(/Signed in remote/);
  expect((await vaultKeys()).filter((k) => k.startsWith('oauth-tokens/')).length).toBe(1);
  const after = await cliJson<{ oauth: OAuthStatus }>(dir, ['upstreams', 'show', 'remote'], env);
  expect(after.oauth).toMatchObject({ state: 'signed_in', refreshable: true });
}, 120_000);
