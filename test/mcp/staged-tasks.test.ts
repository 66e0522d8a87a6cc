import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startService, type RunningService } from '../../main/service.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { connectClient, rawPost, TestClock } from '../helpers/service.ts';
import type { StagedResponse } from '../../main/contract/staged.ts';
import { taskAnswer, withApprovalLink } from '../../main/mcp/task-methods.ts';
import type { CallContext } from '../../main/core/calls/tool.ts';

/** Staged writes as MCP tasks (SEP-2663, 2026-07-28), over raw HTTP: the SDK v2 client has no task runtime (it refuses resultType "task"). */

type Answer = {
  id?: unknown;
  result?: Record<string, unknown> & { status?: string; taskId?: string; resultType?: string };
  error?: { code: number; message: string; data?: { code?: string } };
};
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const TASKS_AND_URL = { ...TASKS, elicitation: { url: {} } };

let dataDir: string;
let svc: RunningService;
let token: string;
let other: string;
const clock = new TestClock();

async function start(): Promise<void> {
  svc = await startService({
    dataDir,
    port: 0,
    vault: 'file',
    enable: true,
    log: silentLogger,
    writeRuntimeFile: false,
    clock,
  });
}

async function rpc(
  method: string,
  params: Record<string, unknown>,
  opts: { caps?: object; bearer?: string } = {},
): Promise<Answer> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'task-client', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': opts.caps ?? {},
  };
  const name =
    typeof params.name === 'string' ? params.name : typeof params.taskId === 'string' ? params.taskId : undefined;
  const res = await rawPost(
    svc.mcpUrl,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } },
    {
      Authorization: `Bearer ${opts.bearer ?? token}`,
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(name ? { 'Mcp-Name': name } : {}),
    },
  );
  return (await res.json()) as Answer;
}

const firstPageId = () => svc.core.siteStore.read().pages[0]!.id as number;
const stageAsTask = (title: string, caps: object = TASKS) =>
  rpc('tools/call', { name: 'pages_update', arguments: { id: firstPageId(), title } }, { caps });
const taskGet = (taskId: string, caps: object = TASKS, bearer?: string) =>
  rpc('tasks/get', { taskId }, { caps, ...(bearer ? { bearer } : {}) });

async function auditOf(stagedId: string) {
  await svc.core.audit.flush();
  return (await svc.core.audit.query({ limit: 200 })).entries.filter((e) => e.staged_id === stagedId);
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-tasks-'));
  await start();
  token = (await svc.createToken({ label: 'task client' })).token;
  other = (await svc.createToken({ label: 'another client' })).token;
});
afterAll(async () => {
  await svc?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('staged writes as tasks (2026-07-28 clients that declare io.modelcontextprotocol/tasks)', () => {
  it('server/discover names the extension', async () => {
    const discover = await rpc('server/discover', {});
    expect((discover.result?.capabilities as { extensions?: object }).extensions).toHaveProperty([
      'io.modelcontextprotocol/tasks',
    ]);
  });

  it('a write answers a working task; approved by a person it completes with the tool result', async () => {
    const before = svc.core.siteStore.read().pages[0]!.title;
    const created = await stageAsTask('Task title one');
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working', pollIntervalMs: expect.any(Number) });
    const taskId = created.result!.taskId!;
    expect(svc.core.siteStore.read().pages[0]!.title).toBe(before);
    expect((await taskGet(taskId)).result).toMatchObject({
      resultType: 'complete',
      taskId,
      status: 'working',
      statusMessage: expect.stringContaining('Waiting for a person'),
    });

    expect((await svc.dispatch('staged.confirm', { id: taskId })).ok).toBe(true);
    const done = await taskGet(taskId);
    expect(done.result).toMatchObject({
      status: 'completed',
      result: {
        isError: false,
        structuredContent: expect.objectContaining({ page: expect.objectContaining({ title: 'Task title one' }) }),
      },
    });
    expect(svc.core.siteStore.read().pages[0]!.title).toBe('Task title one');
  });

  it('a person discarding, or the write expiring, fails the task with the reason', async () => {
    const discarded = (await stageAsTask('Never applied')).result!.taskId!;
    await svc.dispatch('staged.discard', { id: discarded });
    expect((await taskGet(discarded)).result).toMatchObject({
      status: 'failed',
      error: { code: -32012, data: { code: 'staged_discarded', staged_id: discarded } },
    });

    const lapsed = (await stageAsTask('Too late')).result!.taskId!;
    clock.advance(16 * 60_000);
    expect((await taskGet(lapsed)).result).toMatchObject({
      status: 'failed',
      error: { data: { code: 'staged_expired' } },
    });
    await svc.core.staging.sweep();
    expect((await taskGet(lapsed)).result).toMatchObject({
      status: 'failed',
      error: { data: { code: 'staged_expired' } },
    });
  });

  it('a 2026-07-28 client with URL-mode elicitation and no tasks gets the approval link in its pending_approval answer', async () => {
    const answer = await rpc(
      'tools/call',
      { name: 'pages_update', arguments: { id: firstPageId(), title: 'Link in result' } },
      { caps: { elicitation: { url: {} } } },
    );
    const structured = answer.result!.structuredContent as StagedResponse & { approval_url: string };
    expect(structured).toMatchObject({
      status: 'pending_approval',
      approval_url: expect.stringMatching(/#approve\/[A-Za-z0-9_-]{43}$/),
    });
    expect(JSON.stringify(answer.result!.content)).toContain(structured.approval_url);
  });

  it('a client that also declared URL-mode elicitation is asked (input_required) to send the person to the approval link', async () => {
    const created = await stageAsTask('Linked title', TASKS_AND_URL);
    expect(created.result!.status).toBe('input_required');
    const got = await taskGet(created.result!.taskId!, TASKS_AND_URL);
    const request = Object.values(
      got.result!.inputRequests as Record<string, { method: string; params: { mode: string; url: string } }>,
    )[0]!;
    expect(request).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'url', url: expect.stringMatching(/\/console\/#approve\/[A-Za-z0-9_-]{43}$/) },
    });
    // The link carries no credential: not the token, not the staged id.
    expect(request.params.url).not.toContain(token);
    expect(request.params.url).not.toContain(created.result!.taskId!);
    // The same task polled without URL elicitation is plainly working.
    expect((await taskGet(created.result!.taskId!)).result!.status).toBe('working');
  });

  it('tasks/cancel from the client discards the write, audited with the token as principal; the task is cancelled', async () => {
    const taskId = (await stageAsTask('Withdrawn')).result!.taskId!;
    expect((await rpc('tasks/cancel', { taskId }, { caps: TASKS })).result).toMatchObject({ resultType: 'complete' });
    expect((await taskGet(taskId)).result).toMatchObject({ status: 'cancelled' });
    expect(svc.core.staging.get(taskId).status).toBe('discarded');
    const entry = (await auditOf(taskId)).find((e) => e.result === 'discarded')!;
    expect(entry.principal).toMatchObject({ kind: 'token', surface: 'mcp' });
    expect(entry.token_id).toBe(svc.core.staging.get(taskId).token_id);
  });

  it('tasks/get, tasks/update and tasks/cancel from a client that did not declare the extension: HTTP 400 -32021 naming it (SEP-2663), the task untouched', async () => {
    const taskId = (await stageAsTask('Declared only')).result!.taskId!;
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      for (const caps of [{}, { elicitation: { url: {} } }]) {
        const res = await rawPost(
          svc.mcpUrl,
          {
            jsonrpc: '2.0',
            id: 9,
            method,
            params: {
              taskId,
              ...(method === 'tasks/update' ? { inputResponses: {} } : {}),
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientInfo': { name: 'task-client', version: '1' },
                'io.modelcontextprotocol/clientCapabilities': caps,
              },
            },
          },
          {
            Authorization: `Bearer ${token}`,
            'MCP-Protocol-Version': '2026-07-28',
            'Mcp-Method': method,
            'Mcp-Name': taskId,
          },
        );
        expect(res.status, method).toBe(400);
        const answer = (await res.json()) as Answer;
        expect(answer.id).toBe(9);
        expect(answer.error, method).toMatchObject({
          code: -32021,
          data: {
            requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
            code: 'client_capability_missing',
          },
        });
      }
      // an unknown task from a client that did not declare the extension: the same -32021, nothing revealed
      const unknown = await rpc(method, { taskId: 'stg_doesnotexist', inputResponses: {} }, { caps: {} });
      expect(unknown.error?.code, method).toBe(-32021);
    }
    // a 2025-era request (no envelope; those revisions have no -32021) is answered as before: its own token's task
    const legacy = await rawPost(
      svc.mcpUrl,
      { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId } },
      { Authorization: `Bearer ${token}` },
    );
    expect(((await legacy.json()) as Answer).result).toMatchObject({ taskId, status: 'working' });
    // each refusal is an HTTP refusal in the audit, under our code
    await svc.core.audit.flush();
    const refusals = (await svc.core.audit.query({ limit: 200 })).entries.filter(
      (e) => e.tool === '(http refusal)' && e.error_code === 'client_capability_missing',
    );
    expect(refusals.length).toBe(9);
    expect(svc.core.staging.get(taskId).status).toBe('pending');
    expect((await taskGet(taskId)).result!.status).toBe('working');
  });

  it('a task is visible only to the token that created it', async () => {
    const taskId = (await stageAsTask('Mine only')).result!.taskId!;
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const answer = await rpc(method, { taskId, inputResponses: {} }, { caps: TASKS, bearer: other });
      expect(answer.error, method).toMatchObject({ code: -32602, message: expect.stringContaining('Task not found') });
    }
    expect(svc.core.staging.get(taskId).status).toBe('pending');
    expect((await taskGet('stg_doesnotexist')).error?.code).toBe(-32602);
  });

  it('odd task ids answer "Task not found" without a crash; a remote pending_approval passed through stays a plain answer', async () => {
    for (const taskId of ['__proto__', 'constructor', 'x'.repeat(5000)])
      expect((await taskGet(taskId)).error?.code).toBe(-32602);
    expect((await rpc('tasks/get', {}, { caps: TASKS })).error?.code).toBe(-32602);
    // An upstream Gatehouse's own pending_approval (its staged id is not ours) is not made a task or given a link here.
    const output = {
      structured: {
        status: 'pending_approval',
        staged_id: 'stg_remote0000',
        preview: { summary: 'remote' },
        expires_at: '',
      },
    };
    const ctx = { token: { id: 'tok_any' } } as unknown as CallContext;
    const deps = { staging: svc.core.staging, approvalUrl: (id: string) => svc.core.approvalLinks.urlFor(id) };
    expect(taskAnswer(output, { tasks: true, urlElicitation: true }, deps, ctx)).toBeNull();
    expect(withApprovalLink(output, { tasks: false, urlElicitation: true }, deps, ctx)).toBe(output);
  });

  it('the agent cannot approve through any task method: tasks/update with crafted input, tasks/result, tasks/list', async () => {
    const created = await stageAsTask('Self approval attempt', TASKS_AND_URL);
    const taskId = created.result!.taskId!;
    const key = Object.keys((await taskGet(taskId, TASKS_AND_URL)).result!.inputRequests as object)[0]!;
    for (const inputResponses of [
      { [key]: { action: 'accept' } },
      { [key]: { action: 'accept', content: { approve: true } } },
      { approve: { action: 'accept' } },
      { __proto__: { action: 'accept' } },
    ]) {
      const answer = await rpc('tasks/update', { taskId, inputResponses }, { caps: TASKS_AND_URL });
      expect(answer.error).toBeUndefined();
    }
    for (const method of ['tasks/result', 'tasks/list']) {
      const answer = await rpc(method, { taskId }, { caps: TASKS_AND_URL });
      expect(answer.error?.code, method).toBe(-32601);
    }
    expect(svc.core.staging.get(taskId).status).toBe('pending');
    expect((await taskGet(taskId, TASKS_AND_URL)).result!.status).toBe('input_required');
    expect((await auditOf(taskId)).map((e) => e.result)).toEqual(['staged']);
  });

  it('clients without the extension keep the plain pending_approval answer (SDK v2 client, 2025-11-25 and 2026-07-28)', async () => {
    for (const era of ['legacy', 'modern'] as const) {
      const client = await connectClient(svc.mcpUrl, token, era);
      try {
        const res = await client.callTool({
          name: 'pages_update',
          arguments: { id: firstPageId(), title: `Plain ${era}` },
        });
        const staged = res.structuredContent as StagedResponse & { approval_url?: string };
        expect(staged.status).toBe('pending_approval');
        expect(staged.approval_url).toBeUndefined();
        const status = await client.callTool({
          name: 'staged_writes_status',
          arguments: { staged_id: staged.staged_id },
        });
        expect((status.structuredContent as { status: string }).status).toBe('pending');
      } finally {
        await client.close();
      }
    }
  });

  it('a 2025-11-25 client (SDK v2) that declared URL-mode elicitation at initialize gets the approval link in pending_approval', async () => {
    const client = new Client(
      { name: 'url-client', version: '1' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: 'legacy' } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(svc.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${other}` } },
      }),
    );
    try {
      const res = await client.callTool({
        name: 'pages_update',
        arguments: { id: firstPageId(), title: 'Linked 2025' },
      });
      const staged = res.structuredContent as StagedResponse & { approval_url?: string };
      expect(staged).toMatchObject({
        status: 'pending_approval',
        approval_url: expect.stringMatching(/#approve\/[A-Za-z0-9_-]{43}$/),
      });
      expect(JSON.stringify(res.content)).toContain(staged.approval_url);
    } finally {
      await client.close();
    }
  });

  it('tasks survive a restart of the service: tasks/get still answers and an approval after it completes the task', async () => {
    const taskId = (await stageAsTask('Across a restart')).result!.taskId!;
    await svc.stop();
    await start();
    expect((await taskGet(taskId)).result).toMatchObject({ taskId, status: 'working' });
    expect((await svc.dispatch('staged.confirm', { id: taskId })).ok).toBe(true);
    expect((await taskGet(taskId)).result).toMatchObject({ status: 'completed' });
    expect(svc.core.siteStore.read().pages[0]!.title).toBe('Across a restart');
  });
});
