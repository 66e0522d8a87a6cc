import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { SETTINGS_KEYS, type Settings } from '../../main/contract/settings.ts';
import type { StagedPayload, StagedResponse } from '../../main/contract/staged.ts';
import { AUDIT_CSV_COLUMNS, type AuditEntry, type AuditPage } from '../../main/contract/audit.ts';
import type { TokenCreated, TokenView } from '../../main/contract/tokens.ts';
import type { User } from '../../main/contract/users.ts';
import { connectClient, INIT, rawPost } from '../helpers/service.ts';
import {
  cliJson,
  cliJsonError,
  dirArgs,
  expectTokenInNoFile,
  mapLimit,
  removeDir,
  runCli,
  runCliHere,
  startServe,
  tempDataDir,
  TOKEN_RE,
  type Served,
} from './cli-harness.ts';

// The services are child processes: seconds each to start on a busy two-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

// Every admin command, end to end, twice: with a service running as a child
// process (the CLI goes through its admin API) and without one (the CLI takes
// the data dir lock and works on the files itself). The commands run in this
// process (cli-harness.ts, runCliHere): the same `main`, the same files and
// HTTP, without a Node start per command. A few run as child processes too,
// for what only the process shows: the exit status and the output on its
// real stdout and stderr.

type Mode = 'service' | 'direct';

describe.each<Mode>(['service', 'direct'])('gatehouse CLI, %s mode', (mode) => {
  let dir: string;
  let served: Served | null = null;
  const tokensMade: string[] = [];

  beforeAll(async () => {
    dir = await tempDataDir();
    if (mode === 'service') served = await startServe(dir);
  });
  afterAll(async () => {
    await served?.stop('SIGKILL');
    await removeDir(dir);
  });

  const cli = <T>(...args: string[]) => cliJson<T>(dir, args, {}, runCliHere);
  const cliError = (...args: string[]) => cliJsonError(dir, args, {}, runCliHere);

  /**
   * Where the command went. With a service the lock stays the service's (a
   * CLI that tried to take it would wait and fail): it can only have gone
   * through the admin API. Without one the CLI took the lock and gave it back.
   */
  async function expectMode(): Promise<void> {
    if (mode === 'service') {
      const lock = JSON.parse(await readFile(join(dir, 'gatehouse.lock'), 'utf8')) as { pid: number; owner: string };
      expect(lock).toMatchObject({ pid: served!.child.pid, owner: 'service' });
    } else {
      expect(existsSync(join(dir, 'runtime.json'))).toBe(false);
      expect(existsSync(join(dir, 'gatehouse.lock'))).toBe(false);
    }
  }

  /** A running service for MCP clients: the shared one, or (direct mode) one started just for `fn` and stopped after. */
  async function withService<T>(fn: (s: Served) => Promise<T>): Promise<T> {
    if (served) return fn(served);
    const temp = await startServe(dir);
    try {
      return await fn(temp);
    } finally {
      expect(await temp.stop('SIGTERM')).toEqual({ code: 0, signal: null, killed: false });
    }
  }

  const initStatus = async (s: Served, token: string) =>
    (await rawPost(s.info.mcp_url, INIT, { Authorization: `Bearer ${token}` })).status;

  it('tokens create, list and revoke; the token works until it is revoked; its clear text lands in no file', async () => {
    const a = await cli<TokenCreated>('tokens', 'create', '--label', 'Claude Desktop');
    const b = await cli<TokenCreated>('tokens', 'create', '--label', 'Reader', '--read-only');
    await expectMode();
    for (const t of [a, b]) {
      expect(t.token).toMatch(TOKEN_RE);
      // least privilege: without --user a token acts as the editor 'agent', never as the administrator
      expect(t.record.user_login).toBe('agent');
      expect(t.record.preview).toBe(`gth_…${t.token.slice(-4)}`);
      expect(t.record).not.toHaveProperty('hash');
      tokensMade.push(t.token);
      await expectTokenInNoFile(dir, t.token);
    }
    expect(a.record.label).toBe('Claude Desktop');
    expect(b.record.scope.read_only).toBe(true);
    expect(a.token).not.toBe(b.token);
    expect((await cli<User[]>('users', 'list')).filter((u) => u.login === 'agent').map((u) => u.role)).toEqual([
      'editor',
    ]);
    const ops = await cli<TokenCreated>('tokens', 'create', '--label', 'Ops', '--user', 'admin');
    tokensMade.push(ops.token);
    expect(ops.record.user_login).toBe('admin');

    const listed = await cli<TokenView[]>('tokens', 'list');
    expect(listed.map((t) => t.id)).toEqual(expect.arrayContaining([a.record.id, b.record.id]));
    const listedText = JSON.stringify(listed);
    expect(listedText).not.toContain(a.token);
    expect(listedText).not.toContain('"hash"');

    await withService(async (s) => {
      const client = await connectClient(s.info.mcp_url, a.token);
      expect((await client.callTool({ name: 'site_identity', arguments: {} })).isError).toBeFalsy();
      await client.close();
      expect(await initStatus(s, b.token)).toBe(200);
    });

    // With a service it must stop verifying at once; without one, from the next start on.
    expect(await cli<{ id: string }>('tokens', 'revoke', a.record.id)).toEqual({ id: a.record.id });
    await expectMode();
    await withService(async (s) => {
      expect(await initStatus(s, a.token)).toBe(401);
      expect(await initStatus(s, b.token)).toBe(200);
    });
    expect((await cli<TokenView[]>('tokens', 'list')).map((t) => t.id)).not.toContain(a.record.id);
    const again = await cliError('tokens', 'revoke', a.record.id);
    expect(again).toMatchObject({ exit: 1, code: 'not_found' });
    expect(again.message).toContain(a.record.id);
  });

  it('users list, add and set-role', async () => {
    const login = `ed-${mode}`;
    expect((await cli<User[]>('users', 'list')).find((u) => u.login === 'admin')?.role).toBe('administrator');
    const added = await cli<User>('users', 'add', login, '--role', 'editor', '--name', 'Ed Itor');
    expect(added).toMatchObject({ login, role: 'editor', display_name: 'Ed Itor' });
    await expectMode();
    expect(await cli<User>('users', 'set-role', login, 'author')).toMatchObject({ login, role: 'author' });
    const users = await cli<User[]>('users', 'list');
    expect(users.find((u) => u.login === login)).toMatchObject({ id: added.id, role: 'author' });
    const dup = await cliError('users', 'add', login, '--role', 'editor');
    expect(dup).toMatchObject({ exit: 1, code: 'conflict' });
    expect(dup.message).toContain(login);

    // A token for that user carries the user's login.
    const t = await cli<TokenCreated>('tokens', 'create', '--label', 'author bot', '--user', login);
    tokensMade.push(t.token);
    expect(t.record).toMatchObject({ user_id: added.id, user_login: login });
  });

  it('staged list, show, confirm and discard a write staged by a real MCP client', async () => {
    const writer = await cli<TokenCreated>('tokens', 'create', '--label', 'writer');
    tokensMade.push(writer.token);
    let client: Client | null = null;
    const { staged, pageIds } = await withService(async (s) => {
      client = await connectClient(s.info.mcp_url, writer.token);
      const list = await client.callTool({ name: 'pages_list', arguments: { status: 'any' } });
      const ids = (list.structuredContent as { pages: Array<{ id: number }> }).pages.map((p) => p.id).slice(0, 2);
      expect(ids).toHaveLength(2);
      const out: StagedResponse[] = [];
      for (const [i, id] of ids.entries()) {
        const res = await client.callTool({
          name: 'pages_update',
          arguments: { id, title: `Staged title ${mode} ${i}` },
        });
        expect(res.isError).toBeFalsy();
        out.push(res.structuredContent as StagedResponse);
      }
      if (mode === 'direct') await client.close();
      return { staged: out, pageIds: ids };
    });
    const [keep, drop] = staged as [StagedResponse, StagedResponse];
    expect(keep.status).toBe('pending_approval');

    const pending = await cli<StagedPayload[]>('staged', 'list', '--status', 'pending');
    expect(pending.map((p) => p.id).sort()).toEqual([keep.staged_id, drop.staged_id].sort());
    await expectMode();
    const shown = await cli<StagedPayload>('staged', 'show', keep.staged_id);
    expect(shown).toMatchObject({ id: keep.staged_id, status: 'pending', tool: 'pages_update', token_label: 'writer' });
    expect(shown.preview.changes.find((c) => c.field === 'title')?.after).toBe(`Staged title ${mode} 0`);

    const confirmed = await cli<StagedPayload>('staged', 'confirm', keep.staged_id);
    expect(confirmed.status).toBe('confirmed');
    const discarded = await cli<StagedPayload>('staged', 'discard', drop.staged_id);
    expect(discarded.status).toBe('discarded');
    const late = await cliError('staged', 'confirm', drop.staged_id);
    expect(late).toMatchObject({ exit: 1, code: 'staged_already_decided' });
    const missing = await cliError('staged', 'show', 'stg_nope');
    expect(missing).toMatchObject({ exit: 1, code: 'staged_not_found' });
    expect(missing.message).toContain('stg_nope');
    expect(await cli<StagedPayload[]>('staged', 'list', '--status', 'pending')).toEqual([]);
    expect((await cli<StagedPayload[]>('staged', 'list')).map((p) => [p.id, p.status])).toEqual(
      expect.arrayContaining([
        [keep.staged_id, 'confirmed'],
        [drop.staged_id, 'discarded'],
      ]),
    );

    // Applied exactly once, the discarded one not at all.
    let titles: string[];
    if (mode === 'service') {
      const c = client! as Client;
      titles = [];
      for (const id of pageIds)
        titles.push(
          (
            (await c.callTool({ name: 'pages_get', arguments: { id } })).structuredContent as {
              page: { title: string };
            }
          ).page.title,
        );
      await c.close();
    } else {
      const site = JSON.parse(await readFile(join(dir, 'site.json'), 'utf8')) as {
        pages: Array<{ id: number; title: string }>;
      };
      titles = pageIds.map((id) => site.pages.find((p) => p.id === id)!.title);
    }
    expect(titles[0]).toBe(`Staged title ${mode} 0`);
    expect(titles[1]).not.toBe(`Staged title ${mode} 1`);
  });

  it('audit list (filters, cursor) and export as CSV and JSONL', async () => {
    const page = await cli<AuditPage>('audit', 'list', '--limit', '1000');
    await expectMode();
    expect(page.next_cursor).toBeNull();
    const results = page.entries
      .filter((e) => e.tool === 'pages_update')
      .map((e) => e.result)
      .sort();
    expect(results).toEqual(['confirmed', 'discarded', 'staged', 'staged']);
    expect(page.entries.some((e) => e.tool === 'site_identity' && e.result === 'ok')).toBe(true);

    const staged = await cli<AuditPage>('audit', 'list', '--tool', 'pages_update', '--result', 'staged');
    expect(staged.entries).toHaveLength(2);
    const first = await cli<AuditPage>('audit', 'list', '--limit', '1');
    expect(first.entries).toHaveLength(1);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await cli<AuditPage>('audit', 'list', '--limit', '1', '--cursor', first.next_cursor!);
    expect(second.entries[0]!.id).toBe(page.entries[1]!.id);

    const [jsonl, csv, filtered] = await Promise.all([
      runCliHere(['audit', 'export', '--format', 'jsonl', ...dirArgs(dir)]),
      runCliHere(['audit', 'export', '--format', 'csv', ...dirArgs(dir)]),
      runCliHere(['audit', 'export', '--format', 'jsonl', '--tool', 'pages_update', ...dirArgs(dir)]),
    ]);
    for (const r of [jsonl, csv, filtered]) expect(r.code, r.stderr).toBe(0);
    const exported = jsonl.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditEntry);
    expect(exported.map((e) => e.id).sort()).toEqual(page.entries.map((e) => e.id).sort());
    const rows = csv.stdout.split('\r\n').filter(Boolean);
    expect(rows[0]).toBe(AUDIT_CSV_COLUMNS.join(','));
    expect(rows).toHaveLength(page.entries.length + 1);
    for (const e of page.entries) expect(csv.stdout).toContain(e.id);
    const onlyUpdates = filtered.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditEntry);
    expect(onlyUpdates.map((e) => e.tool)).toEqual(['pages_update', 'pages_update', 'pages_update', 'pages_update']);
  });

  it('console-link: a fresh one-time link from the service, a clear error without one', async () => {
    if (mode === 'service') {
      const { url } = await cli<{ url: string }>('console-link');
      expect(url).toMatch(new RegExp(`^${served!.info.base_url}/console/login\\?code=[A-Za-z0-9_-]{20,}$`));
      expect(url).not.toBe(served!.info.console_login_url);
      expect((await fetch(url, { redirect: 'manual' })).status).toBe(302);
      expect((await fetch(url, { redirect: 'manual' })).status).toBe(401);
    } else {
      const err = await cliError('console-link');
      expect(err).toMatchObject({ exit: 1, code: 'service_unavailable' });
      expect(err.message).toContain('gatehouse serve');
      const human = await runCli(['console-link', ...dirArgs(dir)]);
      expect(human.code).toBe(1);
      expect(human.stdout).toBe('');
      expect(human.stderr).toMatch(/no service is running.*\[service_unavailable\]/);
      await expectMode();
    }
  });

  it('settings get and set, validated, lists comma-separated', async () => {
    const all = await cli<Settings>('settings', 'get');
    expect(Object.keys(all).sort()).toEqual([...SETTINGS_KEYS].sort());
    expect(await cli('settings', 'get', 'rate_limit')).toEqual({ rate_limit: 1200 });

    // Both modes had a `serve --enable` by now; a patch of one key leaves the others alone.
    expect(all.enabled).toBe(true);
    expect(await cli<Settings>('settings', 'set', 'rate_limit', '60')).toEqual({ ...all, rate_limit: 60 });
    await expectMode();
    expect((await cli<Settings>('settings', 'set', 'cors', 'http://a.example, https://b.example:8443')).cors).toEqual([
      'http://a.example',
      'https://b.example:8443',
    ]);
    expect((await cli<Settings>('settings', 'set', 'trust_proxy_headers', 'on')).trust_proxy_headers).toBe(true);
    expect((await cli<Settings>('settings', 'set', 'approval_mode', 'agent')).approval_mode).toBe('agent');
    expect(await cli<Settings>('settings', 'get')).toEqual({
      ...all,
      rate_limit: 60,
      cors: ['http://a.example', 'https://b.example:8443'],
      trust_proxy_headers: true,
      approval_mode: 'agent',
    });

    // The running service (or the next one) applies it: a disabled tool disappears from tools/list.
    expect(
      (await cli<Settings>('settings', 'set', 'disabled_tools', 'site_identity,pages_delete')).disabled_tools,
    ).toEqual(['site_identity', 'pages_delete']);
    const names = await withService(async (s) => {
      const client = await connectClient(s.info.mcp_url, tokensMade[1]!);
      const { tools } = await client.listTools();
      await client.close();
      return tools.map((t) => t.name);
    });
    expect(names).toContain('pages_list');
    expect(names).not.toContain('site_identity');
    expect((await cli<Settings>('settings', 'set', 'disabled_tools', '')).disabled_tools).toEqual([]);

    // Persisted in the options file (directly, or by the service's atomic write).
    const onDisk = JSON.parse(await readFile(join(dir, 'options.json'), 'utf8')) as { settings: Settings };
    expect(onDisk.settings).toEqual({
      ...all,
      rate_limit: 60,
      cors: ['http://a.example', 'https://b.example:8443'],
      trust_proxy_headers: true,
      approval_mode: 'agent',
      disabled_tools: [],
    });
  });

  it('bad values exit 1 with a message naming the problem; nothing changes', async () => {
    const before = await cli<Settings>('settings', 'get');
    // Values the CLI cannot judge alone: the service (or the core, directly) refuses them. Values the CLI checks itself are in usage-errors.test.ts.
    const cases: Array<[string[], string, RegExp]> = [
      [['settings', 'get', 'colour'], 'invalid_value', /unknown setting 'colour'/],
      [['settings', 'get', 'constructor'], 'invalid_value', /unknown setting 'constructor'/],
      [['settings', 'set', 'rate_limit', '--', '-5'], 'invalid_value', /rate_limit/],
      [['settings', 'set', 'audit_retention_days', '0'], 'invalid_value', /audit_retention_days/],
      [['settings', 'set', 'cors', 'not-an-origin'], 'invalid_value', /cors/],
      [['settings', 'set', 'approval_mode', 'robot'], 'invalid_value', /approval_mode/],
      [['settings', 'set', 'disabled_tools', 'bad tool!'], 'invalid_value', /disabled_tools/],
      [['users', 'add', 'Bad Login!', '--role', 'editor'], 'invalid_value', /login.*a login is 1-60 characters/],
      [['users', 'add', 'admin', '--role', 'editor'], 'conflict', /'admin' already exists/],
      [['users', 'set-role', 'nobody', 'editor'], 'not_found', /'nobody'/],
      [['tokens', 'revoke', 'tok_doesnotexist'], 'not_found', /tok_doesnotexist/],
      [['tokens', 'create', '--label', 'x', '--user', 'nobody'], 'not_found', /'nobody'/],
    ];
    const errors = await mapLimit(cases, 4, ([args]) => cliError(...args));
    for (const [i, err] of errors.entries()) {
      const [args, code, message] = cases[i]!;
      expect(err.exit, args.join(' ')).toBe(1);
      expect(err.code, args.join(' ')).toBe(code);
      expect(err.message, args.join(' ')).toMatch(message);
    }
    const human = await runCli(['tokens', 'revoke', 'tok_doesnotexist', ...dirArgs(dir)]);
    expect(human).toMatchObject({ code: 1, stdout: '' });
    expect(human.stderr).toMatch(/^gatehouse: no token with id 'tok_doesnotexist'.*\[not_found\]\n$/m);

    expect(await cli<Settings>('settings', 'get')).toEqual(before);
  });

  it('leaves no clear token in any file once everything is flushed', async () => {
    if (served) {
      expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null, killed: false });
      served = null;
    }
    // The audit files exist and name the tokens by preview: they are where a leak would show.
    const exported = await runCli(['audit', 'export', '--format', 'jsonl', ...dirArgs(dir)]);
    expect(exported.stdout).toContain('gth_…');
    expect(tokensMade.length).toBeGreaterThanOrEqual(4);
    for (const token of tokensMade) await expectTokenInNoFile(dir, token);
  });
});
