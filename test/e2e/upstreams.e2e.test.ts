/**
 * The desk's upstream screens end to end: a fresh build of the console served
 * by the real service (licensed by the real reference gateway, so upstream
 * tools can be called), Debian's Chromium driven by playwright-core, the real
 * SDK client as the agent. A person adds server-everything over stdio through
 * both consent steps, settles a write whose outcome is unknown (a real
 * upstream that got the call and answered too late), and approves a
 * server-filesystem write_file looking at the line diff of the file.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry, StagedPayload, UpstreamView } from '../../main/contract/index.ts';
import {
  EVERYTHING,
  FILESYSTEM,
  TEST_UPSTREAM,
  startUpstreamWorld,
  until,
  type UpstreamWorld,
} from '../plugins/upstream/upstream-world.ts';
import { buildConsole, go as goTo, openPage, shot as shotOf } from './browser.ts';

const STEP = { timeout: 20_000 };
const SECRET = 'e2e-env-value-91c4d7';

let work: string;
let u: UpstreamWorld;
let context: BrowserContext;
let page: Page;
let client: Client;
const browserErrors: string[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'gatehouse-e2e-up-'));
  const consoleDir = await buildConsole(work);
  u = await startUpstreamWorld({ consoleDir });
  client = await u.mcp();
  ({ context, page } = await openPage(browserErrors));
  await page.goto(u.w.svc.loginUrl());
}, 180_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await context?.close();
  await u?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const go = (screen: string) => goTo(page, screen, STEP);
const names = async () => (await client.listTools()).tools.map((t) => t.name);

describe('upstreams from the console (Chromium against the licensed service)', () => {
  it('adds server-everything over stdio: the program is shown before it runs, its tools are offered only once agreed to', async () => {
    await go('Upstreams');
    await page.getByRole('button', { name: 'Add an upstream server' }).click();
    await page.getByLabel('Id').fill('every');
    await page.getByLabel('Command').fill(process.execPath);
    await page.getByLabel('Arguments (one per line)').fill(`${EVERYTHING}\nstdio`);
    await page.getByRole('button', { name: 'Add a variable' }).click();
    await page.getByLabel('variable 1 name').fill('E2E_SECRET');
    await page.getByLabel('variable 1 value').fill(SECRET);

    // A bad id is named beside its field; nothing is sent.
    await page.getByLabel('Id').fill('Every_1');
    await page.getByRole('button', { name: 'Review before running' }).click();
    await page.locator('#up-id-error').waitFor(STEP);
    await page.getByLabel('Id').fill('every');
    await page.getByRole('button', { name: 'Review before running' }).click();

    const consent = page.getByRole('region', { name: 'Run this program for “every”?' });
    await consent.waitFor(STEP);
    expect(await consent.getByLabel('Program').textContent()).toBe(process.execPath);
    expect(await consent.getByRole('list', { name: 'Arguments' }).getByRole('listitem').allTextContents()).toEqual([
      JSON.stringify(EVERYTHING),
      '"stdio"',
    ]);
    expect(await consent.getByLabel('Environment variable names').textContent()).toBe('E2E_SECRET');
    expect(await page.content()).not.toContain(SECRET);
    await shotOf(page, 'upstream-add-consent');
    // Nothing runs before the person says so.
    expect(await u.ok<UpstreamView[]>('GET', 'upstreams')).toEqual([]);

    await consent.getByRole('button', { name: 'Run it and list its tools' }).click();
    const tools = page.getByRole('region', {
      name: /^Offer these \d+ tools and \d+ prompts of “every” to your clients\?$/,
    });
    await tools.waitFor(STEP);
    expect(await tools.getByText('every__echo', { exact: true }).count()).toBe(1);
    // Listed and pinned as they were shown, but offered to no client yet.
    expect((await names()).filter((n) => n.startsWith('every__'))).toEqual([]);
    // Its prompts too (pinned like tools): listed on the same screen, offered to no client yet.
    expect(
      await tools
        .getByRole('table', { name: 'Prompts of every' })
        .getByText('every__simple-prompt', { exact: true })
        .count(),
    ).toBe(1);
    expect((await client.listPrompts()).prompts.filter((p) => p.name.startsWith('every__'))).toEqual([]);
    const echoClass = tools.getByLabel('Class of every__echo');
    await echoClass.selectOption('read');
    await shotOf(page, 'upstream-add-tools');
    await tools.getByRole('button', { name: /^Offer these \d+ tools and \d+ prompts$/ }).click();

    await page.getByRole('heading', { level: 2, name: 'every' }).waitFor(STEP);
    await until(async () => (await names()).includes('every__echo'), 15_000, 'the agreed tools to be offered');
    await until(
      async () => (await client.listPrompts()).prompts.some((p) => p.name === 'every__simple-prompt'),
      15_000,
      'the agreed prompts to be offered',
    );
    const echo = await client.callTool({ name: 'every__echo', arguments: { message: 'hello from e2e' } });
    expect(JSON.stringify(echo.content)).toContain('hello from e2e');
    expect(await readFile(join(u.w.svc.dataDir, 'upstreams.json'), 'utf8')).not.toContain(SECRET);
    expect(await page.content()).not.toContain(SECRET);

    // The panel's actions: a test answers in words; the log of its stderr is there.
    await page.getByRole('button', { name: 'Test every' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /every answered: \d+ tools/ })
      .waitFor(STEP);
    await page.getByText(/^Log: what the program wrote to stderr/).waitFor(STEP);
    await shotOf(page, 'upstream-added');
  }, 120_000);

  it("shows a write_file's line diff of the file on the Approvals screen; approving it writes the new text", async () => {
    const folder = join(work, 'files');
    await mkdir(folder);
    const file = join(folder, 'notes.md');
    const before = ['# Notes', 'one', 'two', 'three', 'four', ''].join('\n');
    const after = before.replace('three', 'THREE, from the agent');
    await writeFile(file, before);
    await u.ok('POST', 'upstreams', {
      id: 'fs',
      transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, folder] },
    });
    const fs = await u.mcp();
    const staged = await fs.callTool({ name: 'fs__write_file', arguments: { path: file, content: after } });
    await fs.close();
    const id = (staged.structuredContent as { staged_id: string }).staged_id;
    // the agent's answer carries no line of the file as it is
    expect(JSON.stringify(staged)).not.toContain('- three');

    await go('Approvals');
    const row = page.locator(`li[data-id="${id}"]`);
    await row.waitFor(STEP);
    const select = row.getByRole('button', { name: /write_file/ }).first();
    if ((await select.getAttribute('aria-expanded')) !== 'true') await select.click();
    await row.getByText('notes.md: 1 line changed').waitFor(STEP);
    const table = row.getByRole('table');
    await table.waitFor(STEP);
    expect(await table.getByRole('rowheader').textContent()).toBe(file);
    const lines = async (cell: string, kind: string) =>
      (await table.locator(`td.${cell} .diff-${kind}`).allTextContents()).map((t) => t.replace(/\n$/, ''));
    expect(await lines('before', 'del')).toEqual(['removed: - three']);
    expect(await lines('after', 'add')).toEqual(['added: + THREE, from the agent']);
    expect(await lines('before', 'same')).toEqual(['  # Notes', '  one', '  two', '  four', '  ']);
    // coloured as removed and added; the context lines around them in neither colour
    const style = (cell: string, kind: string) =>
      table
        .locator(`td.${cell} .diff-${kind}`)
        .first()
        .evaluate((el) => [getComputedStyle(el).backgroundColor, getComputedStyle(el).color].join(' / '));
    const [del, add] = [await style('before', 'del'), await style('after', 'add')];
    const context = new Set([await style('before', 'same'), await style('after', 'same')]);
    const seen = JSON.stringify({ del, add, context: [...context] });
    expect(context.size, seen).toBe(1);
    expect(new Set([del, add, ...context]).size, seen).toBe(3);
    await shotOf(page, 'approvals-upstream-diff');

    await row.getByRole('button', { name: 'Approve' }).click();
    await row.waitFor({ state: 'detached', ...STEP });
    // The row leaves the list once the write is applying; the upstream writes the file a moment later.
    const done = await until(
      async () => {
        const s = await u.ok<{ status: string }>('GET', `staged/${id}`);
        return s.status === 'applying' ? null : s;
      },
      STEP.timeout,
      'the approved write to be applied',
    );
    expect(done?.status).toBe('confirmed');
    expect(await readFile(file, 'utf8')).toBe(after);
    expect(browserErrors).toEqual([]);
  }, 90_000);

  it('settles a write whose outcome is unknown: nothing is sent again, the agent sees what the person found', async () => {
    const journal = join(work, 'journal.txt');
    await writeFile(journal, '');
    await u.ok('POST', 'upstreams', {
      id: 'slow',
      timeout_ms: 300,
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [TEST_UPSTREAM],
        env: [{ name: 'JOURNAL', value: journal }],
        sandbox: { write: [work] },
      },
    });
    const staged = await client.callTool({ name: 'slow__append', arguments: { line: 'sent once', hold_ms: 3000 } });
    const id = (staged.structuredContent as { staged_id: string }).staged_id;
    expect((await u.w.admin('POST', `staged/${id}/confirm`)).body).toMatchObject({
      ok: false,
      code: 'outcome_unknown',
    });

    await go('Approvals');
    const unknown = page.getByRole('region', { name: /^Check these yourself/ });
    const row = unknown.locator(`li[data-id="${id}"]`);
    await row.waitFor(STEP);
    expect(await row.textContent()).toContain('outcome_unknown');
    await shotOf(page, 'approvals-outcome-unknown');
    await row.getByRole('button', { name: 'It was not applied' }).click();
    await row.getByRole('group').getByRole('button', { name: 'It was not applied' }).click();
    await unknown.waitFor({ state: 'detached', ...STEP });
    await page
      .getByRole('region', { name: 'Recent decisions' })
      .getByText(/settled by a person, it was not applied/)
      .waitFor(STEP);

    const status = await client.callTool({ name: 'staged_writes_status', arguments: { staged_id: id } });
    expect(status.structuredContent).toMatchObject({
      status: 'failed',
      error_code: 'not_applied',
      settled: { outcome: 'not_applied', was: 'outcome_unknown' },
    });
    const s = await u.ok<StagedPayload>('GET', `staged/${id}`);
    expect(s.settlement?.by).toMatchObject({ kind: 'person', surface: 'console', via: 'session' });
    const audit = await u.ok<{ entries: AuditEntry[] }>('GET', 'audit?tool=slow__append');
    expect(audit.entries[0]).toMatchObject({
      staged_id: id,
      result: 'error',
      error_code: 'not_applied',
      principal: { kind: 'person', surface: 'console' },
    });
    expect(await readFile(journal, 'utf8')).toBe('sent once\n');
    expect(browserErrors).toEqual([]);
  }, 90_000);
});
