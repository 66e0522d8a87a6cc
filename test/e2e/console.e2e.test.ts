/**
 * The console end to end: the real headless service on 127.0.0.1:0 serving a
 * fresh build of the console, Debian's Chromium driven by playwright-core, and
 * the real MCP SDK client as the agent. Follows a person's first session (tokens, a staged write approved) and saves a
 * screenshot of every screen into test-results/screenshots/, or into
 * docs/screenshots/ (shown by the README and docs/console.md) when
 * GATEHOUSE_UPDATE_SCREENSHOTS=1: a test run must not rewrite tracked files.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../main/contract/index.ts';
import type { StagedResponse } from '../../main/contract/index.ts';
import { INIT, connectClient, rawPost, startTestService } from '../helpers/service.ts';
import { SHOTS, buildConsole, go as goTo, openPage, shot as shotOf } from './browser.ts';

const STEP = { timeout: 15_000 };

let work: string;
let svc: Awaited<ReturnType<typeof startTestService>>;
let context: BrowserContext;
let page: Page;
let client: Client | null = null;
const browserErrors: string[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'gatehouse-e2e-'));
  const consoleDir = await buildConsole(work);
  svc = await startTestService({ enable: false, consoleDir });
  ({ context, page } = await openPage(browserErrors));
}, 120_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await context?.close();
  await svc?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
});

const shot = (name: string) => shotOf(page, name);
const go = (screen: string) => goTo(page, screen, STEP);

const gatewaySwitch = () => page.getByRole('switch', { name: 'Gateway' });

async function setGateway(on: boolean): Promise<void> {
  await go('Overview');
  const sw = gatewaySwitch();
  await sw.waitFor(STEP);
  if ((await sw.getAttribute('aria-checked')) !== String(on)) await sw.click();
  await page.locator(`[role="switch"][aria-label="Gateway"][aria-checked="${on}"]`).waitFor(STEP);
}

describe('console end to end (Chromium against the headless service)', () => {
  let token = '';
  let staged: StagedResponse;

  it('logs in through the one-time link and shows the overview with the strict CSP', async () => {
    const response = await page.goto(svc.loginUrl());
    expect(new URL(page.url()).pathname).toBe('/console/');
    expect(response?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await gatewaySwitch().waitFor(STEP);
    expect(await gatewaySwitch().getAttribute('aria-checked')).toBe('false');
    const cookies = await context.cookies(svc.baseUrl);
    expect(cookies.find((c) => c.name === 'gatehouse_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    // the link is spent: a second use is refused, with a styled page that says how to get a new one
    const again = await fetch(page.url().replace('/console/', '/console/login?code=used'));
    expect(again.status).toBe(401);
    const other = await context.newPage();
    other.on('console', (m) => {
      if (m.type() === 'error' && !/status of 401/.test(m.text())) browserErrors.push(m.text());
    });
    await other.goto(page.url().replace('/console/', '/console/login?code=used'));
    await other.getByRole('heading', { name: /already been used or has expired/ }).waitFor(STEP);
    // its stylesheet applied (allowed by hash): the card has a border radius
    expect(await other.locator('main').evaluate((el) => getComputedStyle(el).borderTopLeftRadius)).toBe('12px');
    await other.screenshot({ path: join(SHOTS, 'login-used.png') });
    await other.close();
  }, 60_000);

  it('switches the gateway on', async () => {
    await setGateway(true);
    expect(svc.core.settings.get().enabled).toBe(true);
    await shot('overview');
  }, 60_000);

  it('creates a token and shows it once with client snippets', async () => {
    await go('Tokens');
    await page.getByLabel('Label').fill('E2E client');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('heading', { name: 'Token “E2E client” created' }).waitFor(STEP);
    token = await page.getByLabel('The new token').inputValue();
    expect(token).toMatch(/^gth_[A-Za-z0-9_-]{43}$/);
    // The Claude Desktop snippet starts the bridge the way the service says it starts here (no bare
    // `gatehouse-bridge`, which a checkout does not put on PATH): start it exactly so and use it.
    const snippet = JSON.parse((await page.locator('.snippet pre').textContent())!) as {
      mcpServers: { gatehouse: { command: string; args: string[]; env: Record<string, string> } };
    };
    const entry = snippet.mcpServers.gatehouse;
    expect(entry.command).toBe(process.execPath);
    expect(entry.args[0]).toMatch(/\/bin\/gatehouse-bridge\.mjs$/);
    expect(entry.args).toEqual(expect.arrayContaining(['--data-dir', svc.dataDir, '--token-env', 'GATEHOUSE_TOKEN']));
    // The token travels in the environment, so the vault is no concern of this entry (the writer adds no --vault either).
    expect(entry.args).not.toContain('--vault');
    const bridged = new Client({ name: 'snippet', version: '1' }, { capabilities: {} });
    await bridged.connect(
      new StdioClientTransport({
        command: entry.command,
        args: entry.args,
        env: { PATH: process.env.PATH ?? '', HOME: work, ...entry.env },
        stderr: 'ignore',
      }),
    );
    try {
      expect((await bridged.listTools()).tools.map((t) => t.name)).toContain('pages_get');
    } finally {
      await bridged.close();
    }
    await shot('tokens-created');
    await page.getByRole('button', { name: /Done/ }).click();
    await page.getByRole('cell', { name: 'E2E client', exact: true }).waitFor(STEP);
    await shot('tokens');
  }, 60_000);

  it('shows a write staged by a real MCP client in Approvals without a reload, and approves it', async () => {
    await go('Approvals');
    await page.getByText(/Nothing is waiting for approval/).waitFor(STEP);
    await page.evaluate(() => ((window as unknown as { e2eMarker: number }).e2eMarker = 1));

    client = await connectClient(svc.mcpUrl, token);
    const result = await client.callTool({
      name: 'pages_update',
      arguments: { id: 1, title: 'Changed from the e2e test' },
    });
    expect(result.isError).toBeFalsy();
    staged = result.structuredContent as StagedResponse;
    expect(staged.status).toBe('pending_approval');

    const row = page.locator(`li[data-id="${staged.staged_id}"]`);
    await row.waitFor(STEP);
    expect(await page.evaluate(() => (window as unknown as { e2eMarker?: number }).e2eMarker)).toBe(1);
    expect(await row.textContent()).toContain('E2E client');
    await row.getByRole('table').waitFor(STEP);
    expect(await row.getByRole('table').textContent()).toContain('Changed from the e2e test');
    await page.getByRole('link', { name: /^Approvals\s*, 1 pending$/ }).waitFor(STEP);
    await shot('approvals');

    await page.locator('body').press('a');
    await row.waitFor({ state: 'detached', ...STEP });
    await page.getByRole('region', { name: 'Recent decisions' }).getByText('approved').waitFor(STEP);
    await shot('approvals-decided');

    const read = await client.callTool({ name: 'pages_get', arguments: { id: 1 } });
    expect(JSON.stringify(read.structuredContent)).toContain('Changed from the e2e test');
    expect(svc.core.siteStore.read().pages.find((p: { id: number }) => p.id === 1)?.title).toBe(
      'Changed from the e2e test',
    );
  }, 60_000);

  it('keeps a refused approval on its row, says when writes share a target, and lays out at 390 px', async () => {
    const stage = async (title: string) =>
      (await client!.callTool({ name: 'pages_update', arguments: { id: 3, title } }))
        .structuredContent as StagedResponse;
    const first = await stage('First of two edits');
    const second = await stage('Second of two edits');
    await go('Approvals');
    const row1 = page.locator(`li[data-id="${first.staged_id}"]`);
    const row2 = page.locator(`li[data-id="${second.staged_id}"]`);
    await row2.getByText(/1 other pending write changes/).waitFor(STEP);
    await shot('approvals-same-target');

    // A phone-sized window: nothing sticks out sideways and a row's parts do not overlap.
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = () =>
      page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(await overflow()).toBeLessThanOrEqual(0);
    const title = (await row1.locator('.approval-select').boundingBox())!;
    const actions = (await row1.locator('.approval-actions').boundingBox())!;
    expect(actions.y >= title.y + title.height || actions.x >= title.x + title.width).toBe(true);
    expect(actions.x + actions.width).toBeLessThanOrEqual(390);
    await shot('approvals-narrow');
    await go('Activity');
    await page.getByRole('region', { name: 'Audit entries' }).waitFor(STEP);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shot('activity-narrow');
    await page.setViewportSize({ width: 1280, height: 900 });

    // Approving one makes the other stale: the refusal stays on its row until dismissed.
    await go('Approvals');
    await row1.getByRole('button', { name: 'Approve' }).click();
    await row1.waitFor({ state: 'detached', ...STEP });
    await row2.getByRole('button', { name: 'Approve' }).click();
    await row2
      .getByRole('alert')
      .getByText(/target changed after this preview/)
      .waitFor(STEP);
    expect(svc.core.staging.get(second.staged_id).status).toBe('failed');
    await shot('approvals-refused');
    await row2.getByRole('button', { name: 'Dismiss' }).click();
    await row2.waitFor({ state: 'detached', ...STEP });
    await page
      .getByRole('region', { name: 'Recent decisions' })
      .getByText(/the target changed after the preview was made \(stale_preview\)/)
      .waitFor(STEP);
  }, 90_000);

  it('shows the staged and confirmed entries in Activity', async () => {
    await go('Activity');
    const table = page.getByRole('region', { name: 'Audit entries' });
    await table.waitFor(STEP);
    const rows = table.locator('tbody tr', { hasText: 'pages_update' });
    await rows.filter({ hasText: 'confirmed' }).first().waitFor(STEP);
    await rows.filter({ hasText: 'staged' }).first().waitFor(STEP);
    // At 1280 px the whole row shows, up to the last column, even with long client-chosen text.
    const wide =
      '/home/someone/projects/northbank-roasters/content/drafts/2026/brewing-guides/aeropress-inverted-method.md';
    svc.core.auditor.record(
      { tool: 'files_read', write: false, result: 'ok', target: `file:${wide}` },
      { principal: null, client: 'claude-code/2.1.3 (Linux; a long client name)' },
    );
    await page.reload();
    await table.locator('tbody tr', { hasText: 'files_read' }).waitFor(STEP);
    const cut = await table.evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(cut).toBeLessThanOrEqual(0);
    const csv = await page.getByRole('link', { name: 'CSV' }).getAttribute('href');
    expect(csv).toContain('/wp-json/gatehouse/v1/admin/audit/export?format=csv');
    await shot('activity');
  }, 60_000);

  it('charts the calls in Usage and explains every setting', async () => {
    await svc.core.stats.flush();
    await go('Usage');
    await page.getByRole('img', { name: /Calls per hour/ }).waitFor(STEP);
    await page.getByText(/^Not connected\./).waitFor(STEP);
    await shot('usage');
    await go('Settings');
    await page.getByLabel('Rate limit (requests per minute)').waitFor(STEP);
    await shot('settings');
  }, 60_000);

  it('reads well in dark mode too', async () => {
    const second = await client!.callTool({
      name: 'pages_update',
      arguments: { id: 2, content: 'A new opening paragraph.\n\nThe rest stays.' },
    });
    const pending = second.structuredContent as StagedResponse;
    await page.emulateMedia({ colorScheme: 'dark' });
    await go('Approvals');
    await page.locator(`li[data-id="${pending.staged_id}"]`).waitFor(STEP);
    await shot('approvals-dark');
    await page.locator('body').press('d');
    await page.locator(`li[data-id="${pending.staged_id}"]`).waitFor({ state: 'detached', ...STEP });
    await go('Overview');
    await gatewaySwitch().waitFor(STEP);
    await shot('overview-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(svc.core.staging.get(pending.staged_id).status).toBe('discarded');
  }, 60_000);

  it('revokes the token; the client gets 401', async () => {
    await go('Tokens');
    await page.getByRole('button', { name: 'Revoke “E2E client”' }).click();
    await page
      .getByRole('group', { name: /Revoke “E2E client”\?/ })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await page.getByRole('cell', { name: 'E2E client', exact: true }).waitFor({ state: 'detached', ...STEP });
    await expect(client!.callTool({ name: 'pages_get', arguments: { id: 1 } })).rejects.toThrow();
    const raw = await rawPost(svc.mcpUrl, INIT, { Authorization: `Bearer ${token}` });
    expect(raw.status).toBe(401);
  }, 60_000);

  it('switches the gateway off and on', async () => {
    const other = (await svc.createToken({ label: 'still valid' })).token;
    await setGateway(false);
    expect((await rawPost(svc.mcpUrl, INIT, { Authorization: `Bearer ${other}` })).status).toBe(503);
    await setGateway(true);
    expect((await rawPost(svc.mcpUrl, INIT, { Authorization: `Bearer ${other}` })).status).toBe(200);
  }, 60_000);

  it('ran without a script error or a CSP violation in the page', () => {
    // 401/404: the spent login link; 409: the stale approval the desk test provokes on purpose.
    expect(browserErrors.filter((e) => !/status of 40[149]/.test(e))).toEqual([]);
  });
});
