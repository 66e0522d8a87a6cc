/**
 * The approval link end to end: an agent (a 2026-07-28 client that declared the
 * Tasks extension and URL-mode elicitation) stages a write and is handed the
 * link in its task; Debian's Chromium opens it without a session, is sent to
 * sign in, comes back after the one-time login link, approves, and the task
 * completes with the tool's result.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawPost, startTestService } from '../helpers/service.ts';
import { buildConsole, openPage, shot } from './browser.ts';

const STEP = { timeout: 15_000 };
const CAPS = { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: { url: {} } };

let work: string;
let svc: Awaited<ReturnType<typeof startTestService>>;
let context: BrowserContext;
let page: Page;
let token: string;
const browserErrors: string[] = [];

async function rpc(method: string, params: Record<string, unknown>): Promise<{ result: Record<string, unknown> }> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'agent', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': CAPS,
  };
  const name = String(params.name ?? params.taskId ?? '');
  const res = await rawPost(
    svc.mcpUrl,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } },
    { Authorization: `Bearer ${token}`, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, 'Mcp-Name': name },
  );
  return (await res.json()) as { result: Record<string, unknown> };
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'gatehouse-e2e-link-'));
  const consoleDir = await buildConsole(work);
  svc = await startTestService({ consoleDir });
  token = (await svc.createToken({ label: 'agent' })).token;
  // The page asks for the session once and is refused (401) before it sends the browser to sign in.
  ({ context, page } = await openPage(browserErrors, /401 \(Unauthorized\)/));
}, 120_000);

afterAll(async () => {
  await context?.close();
  await svc?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('approval link (Chromium against the headless service)', () => {
  it('opens the link, is sent to sign in, approves after logging in, and the task completes', async () => {
    const pageId = svc.core.siteStore.read().pages[0]!.id;
    const created = (
      await rpc('tools/call', { name: 'pages_update', arguments: { id: pageId, title: 'Approved in the browser' } })
    ).result;
    expect(created).toMatchObject({ resultType: 'task', status: 'input_required' });
    const taskId = created.taskId as string;
    const request = Object.values(created.inputRequests as Record<string, { params: { url: string } }>)[0]!;
    const url = request.params.url;

    // No session: the page sends the browser to sign in, and nothing of the write is shown there.
    await page.goto(url);
    await page.waitForURL(/\/console\/login\?next=/, STEP);
    await page.getByRole('heading', { name: 'Sign in to decide on this write' }).waitFor(STEP);
    expect(await page.content()).not.toContain('Approved in the browser');

    // The one-time login link, opened in the same browser, comes back to the write.
    await page.goto(svc.loginUrl());
    await page.waitForURL((u) => u.hash.startsWith('#approve/'), STEP);
    expect(page.url()).toBe(url);
    await page.getByRole('heading', { level: 1, name: 'Approve a staged write' }).waitFor(STEP);
    await page.getByText('Approved in the browser').first().waitFor(STEP);
    // only that write: none of the console's screens
    expect(await page.getByRole('navigation', { name: 'Console' }).count()).toBe(0);
    await shot(page, 'approval-link');

    // Approve is bound to the preview the page showed: it sends that preview's hash.
    const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/confirm'), STEP);
    await page.getByRole('button', { name: 'Approve' }).click();
    expect((await sent).postDataJSON()).toEqual({ preview_hash: svc.core.staging.get(taskId).preview_hash });
    await page.getByRole('status').filter({ hasText: 'Approved and applied' }).waitFor(STEP);
    const done = (await rpc('tasks/get', { taskId })).result;
    expect(done).toMatchObject({ status: 'completed', result: { isError: false } });
    expect(svc.core.siteStore.read().pages.find((p: { id: number }) => p.id === pageId)!.title).toBe(
      'Approved in the browser',
    );
    expect(svc.core.staging.get(taskId).decided_by).toMatchObject({
      kind: 'person',
      surface: 'console',
      via: 'session',
    });

    // The link died with its write.
    await page.reload();
    await page.getByRole('alert').filter({ hasText: 'no longer valid' }).waitFor(STEP);
    expect(browserErrors.filter((e) => !/410 \(Gone\)/.test(e))).toEqual([]);
  });
});
