import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import {
  ADMIN_PREFIX,
  PRINCIPALS,
  actionRequest,
  type AnyAction,
  type AuditPage,
  type StagedPayload,
  type StagedResponse,
} from '../../main/contract/index.ts';
import { dispatchAs } from '../../main/core/admin/invoke.ts';
import { connectClient, startTestService } from '../helpers/service.ts';
import { here } from './cli-harness.ts';

// The commands run in this process (cli-harness.ts, runCliHere): what they do and answer, without a Node start each.
const { cliJson, cliJsonError } = here;

// One action path, with the caller: the same input gets the same
// answer (code and message) from IPC, the admin REST and the CLI with and
// without a running service, because all of them go through the core's
// invoke; and every decision records who made it, through which surface.

vi.mock('electron', () => import('../app/electron-mock.ts'));
const electron = await import('../app/electron-mock.ts');
const { ConsoleWindows } = await import('../../main/app/window.ts');
const { registerIpc } = await import('../../main/app/ipc.ts');

// Child processes loading the CLI through tsx: seconds each on a busy two-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

let svc: Awaited<ReturnType<typeof startTestService>>;
let cookie: string;
let agent: Client;
let windows: InstanceType<typeof ConsoleWindows>;

beforeAll(async () => {
  svc = await startTestService();
  const res = await fetch(svc.loginUrl(), { redirect: 'manual' });
  cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  agent = await connectClient(svc.mcpUrl, (await svc.createToken({ label: 'agent' })).token);
  electron.resetElectron();
  windows = new ConsoleWindows({ preload: '/p.cjs' });
  registerIpc({
    ipcMain: electron.ipcMain as never,
    dispatch: dispatchAs(svc.invoke, PRINCIPALS.appConsole),
    owns: (c) => windows.owns(c),
  });
});
afterAll(async () => {
  await agent?.close();
  await svc?.cleanup();
});

/** The console window's IPC call, as the preload makes it. */
async function viaIpc(action: AnyAction, input: unknown) {
  windows.show();
  const win = electron.BrowserWindow.created[0]!;
  return electron.ipcMain.invoke(
    `gatehouse:${action}`,
    { sender: win.webContents, senderFrame: win.webContents.mainFrame },
    input,
  ) as Promise<{ ok: boolean; code?: string; message?: string; data?: unknown }>;
}

/** The browser console's REST call, as renderer/api/rest-client.ts makes it. */
async function viaRest(action: AnyAction, input: unknown) {
  const req = actionRequest(action, input);
  const res = await fetch(`${svc.baseUrl}${req.path}`, {
    method: req.method,
    headers: { Cookie: cookie, 'X-Gatehouse-CSRF': '1', ...(req.body ? { 'Content-Type': 'application/json' } : {}) },
    ...(req.body ? { body: req.body } : {}),
  });
  return {
    status: res.status,
    body: (await res.json()) as { ok: boolean; code?: string; message?: string; data?: unknown },
  };
}

async function stage(title: string): Promise<string> {
  const res = await agent.callTool({ name: 'pages_update', arguments: { id: 1, title } });
  expect(res.isError).toBeFalsy();
  return (res.structuredContent as StagedResponse).staged_id;
}

const BAD: Array<{ action: AnyAction; input: Record<string, unknown>; cli: string[]; code: string }> = [
  {
    action: 'users.add',
    input: { login: 'Bad Login!', role: 'editor' },
    cli: ['users', 'add', 'Bad Login!', '--role', 'editor'],
    code: 'invalid_value',
  },
  {
    action: 'tokens.create',
    input: { label: 'x', keychain_account: 'no spaces please' },
    cli: ['tokens', 'create', '--label', 'x', '--keychain', 'no spaces please'],
    code: 'invalid_value',
  },
  {
    action: 'tokens.create',
    input: { label: 'y'.repeat(101) },
    cli: ['tokens', 'create', '--label', 'y'.repeat(101)],
    code: 'invalid_value',
  },
  {
    action: 'staged.confirm',
    input: { id: 'stg_nosuchwrite' },
    cli: ['staged', 'confirm', 'stg_nosuchwrite'],
    code: 'staged_not_found',
  },
];

const withService: Array<{ code: string; message: string }> = [];
const decided: Record<string, string> = {};

describe('one action path', () => {
  it('the same bad input gets the same code and message over IPC, REST and the CLI through the service', async () => {
    for (const { action, input, cli, code } of BAD) {
      const ipc = await viaIpc(action, input);
      const rest = await viaRest(action, input);
      const fromCli = await cliJsonError(svc.dataDir, cli);
      expect(ipc, action).toMatchObject({ ok: false, code });
      expect(rest.body, action).toMatchObject({ ok: false, code: ipc.code, message: ipc.message });
      expect(rest.status).toBe(code === 'invalid_value' ? 400 : 404);
      expect({ code: fromCli.code, message: fromCli.message }, action).toEqual({
        code: ipc.code,
        message: ipc.message,
      });
      expect(fromCli.exit).toBe(1);
      withService.push({ code: fromCli.code, message: fromCli.message });
    }
    expect(withService[0]!.message).toMatch(/^users\.add: login: a login is 1-60 characters/);
    expect(svc.core.tokens.list().map((t) => t.label)).toEqual(['agent']);
  });

  it('records each decision with its principal: the console in a browser, the app window, the CLI, the agent', async () => {
    decided.console = await stage('Approved in the browser console');
    const r1 = await viaRest('staged.confirm', { id: decided.console });
    expect(r1.status).toBe(200);
    decided.window = await stage('Approved in the app window');
    expect((await viaIpc('staged.confirm', { id: decided.window })).ok).toBe(true);
    decided.cli = await stage('Approved with the CLI');
    expect((await cliJson<StagedPayload>(svc.dataDir, ['staged', 'confirm', decided.cli])).status).toBe('confirmed');
    await svc.dispatch('settings.update', { approval_mode: 'agent' });
    decided.agent = await stage('Approved by the agent itself');
    const byAgent = await agent.callTool({ name: 'staged_writes_confirm', arguments: { staged_id: decided.agent } });
    expect(byAgent.isError).toBeFalsy();
    await svc.dispatch('settings.update', { approval_mode: 'admin' });
    decided.offline = await stage('Discarded with the CLI, no service running');

    const token = svc.core.tokens.list().find((t) => t.label === 'agent')!;
    const expected: Record<string, unknown> = {
      console: {
        kind: 'person',
        surface: 'console',
        via: 'session',
        session: expect.stringMatching(/^ses_[0-9a-f]{12}$/),
      },
      window: PRINCIPALS.appConsole,
      cli: PRINCIPALS.cliViaService,
      agent: {
        kind: 'token',
        surface: 'mcp',
        token_id: token.id,
        token_preview: token.preview,
        user_id: token.user_id,
        login: 'agent',
      }, // a token made without --user acts as `agent`
    };
    const sessionId = (
      (await fetch(`${svc.baseUrl}${ADMIN_PREFIX}/staged/${decided.console}`, { headers: { Cookie: cookie } }).then(
        (r) => r.json(),
      )) as { data: StagedPayload }
    ).data.decided_by;
    for (const [who, id] of Object.entries(decided)) {
      if (who === 'offline') continue;
      expect(svc.core.staging.get(id).decided_by, who).toEqual(expected[who]);
    }
    // the console's cookie never shows: only its public id
    expect(JSON.stringify(sessionId)).not.toContain(cookie.split('=')[1]!);
    const audit = await svc.core.audit.query({ result: 'confirmed', limit: 10 });
    for (const [who, id] of Object.entries(decided)) {
      if (who === 'offline') continue;
      expect(
        audit.entries.filter((e) => e.staged_id === id).map((e) => e.principal),
        who,
      ).toEqual([expected[who]]);
    }
  });

  it('without a service the CLI answers the same, and its decisions are recorded as made on the files', async () => {
    const dataDir = svc.dataDir;
    await svc.stop();
    for (const [i, { cli }] of BAD.entries()) {
      const offline = await cliJsonError(dataDir, cli);
      expect({ code: offline.code, message: offline.message }, cli.join(' ')).toEqual(withService[i]);
    }
    expect((await cliJson<StagedPayload>(dataDir, ['staged', 'discard', decided.offline!])).decided_by).toEqual(
      PRINCIPALS.cliDirect,
    );
    const page = await cliJson<AuditPage>(dataDir, ['audit', 'list', '--limit', '50']);
    const principalOf = (id: string, result: string) =>
      page.entries.find((e) => e.staged_id === id && e.result === result)?.principal;
    expect(principalOf(decided.offline!, 'discarded')).toEqual(PRINCIPALS.cliDirect);
    expect(principalOf(decided.cli!, 'confirmed')).toEqual(PRINCIPALS.cliViaService);
    expect(principalOf(decided.agent!, 'confirmed')).toMatchObject({ kind: 'token', surface: 'mcp' });
  });
});
