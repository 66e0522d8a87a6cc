import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, rawPost } from '../../helpers/service.ts';
import { startAuthProxy, type AuthProxy } from '../../helpers/auth-proxy.ts';
import {
  EVERYTHING,
  FILESYSTEM,
  REPO,
  startUpstreamWorld,
  until,
  type ToolAnswer,
  type UpstreamWorld,
} from './upstream-world.ts';

/**
 * Every answer must be valid for the tool definition Gatehouse
 * listed, for every client. server-filesystem (from npm) declares an
 * outputSchema (`{content: string}`, required) on its writes too; the staged
 * answer `{status: "pending_approval", ...}` broke it, and the SDK clients
 * that validate (the TypeScript SDK's own, the Inspector CLI) failed the call.
 * A write is listed with no outputSchema, the upstream's kept in
 * `_meta["gatehouse/outputSchema"]`; reads keep theirs (their answer is the
 * upstream's own). Checked with the TypeScript SDK client's validation in
 * both eras, the Inspector CLI, a task client and a write the policy runs
 * without approval.
 */
const INSPECTOR = `${REPO}node_modules/@modelcontextprotocol/inspector/cli/build/cli.js`;
const SCHEMA_KEY = 'gatehouse/outputSchema';

let u: UpstreamWorld;
let dir: string;
let proxy: AuthProxy;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-output-schema-'));
  await writeFile(join(dir, 'a.txt'), 'before\n');
  u = await startUpstreamWorld({ license: null });
  await u.ok('POST', 'upstreams', {
    id: 'fs',
    transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, dir] },
  });
  proxy = await startAuthProxy(u.w.svc.mcpUrl, u.token);
}, 120_000);
afterAll(async () => {
  await proxy?.close();
  await u?.stop();
  await rm(dir, { recursive: true, force: true });
});

type Listed = { name: string; outputSchema?: unknown; _meta?: Record<string, unknown> };

describe.each(['legacy', 'modern'] as const)('the TypeScript SDK client (%s era), validating', (era) => {
  it('lists a write with no outputSchema (the upstream’s in _meta) and a read with its own', async () => {
    const client = await connectClient(u.w.svc.mcpUrl, u.token, era);
    try {
      const tools = (await client.listTools()).tools as Listed[];
      const write = tools.find((t) => t.name === 'fs__write_file')!;
      expect(write.outputSchema).toBeUndefined();
      expect(write._meta?.[SCHEMA_KEY]).toMatchObject({ type: 'object', required: ['content'] });
      const read = tools.find((t) => t.name === 'fs__read_text_file')!;
      expect(read.outputSchema).toMatchObject({ type: 'object', required: ['content'] });
      expect(read._meta?.[SCHEMA_KEY]).toBeUndefined();
      // every write, built-in ones too: its answer is a staging receipt, never the tool's own result
      for (const t of tools.filter((x) => x._meta?.['gatehouse/write'] === true))
        expect(t.outputSchema, t.name).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it('a staged write answers without the SDK refusing it, and a read is validated against its schema', async () => {
    const client = await connectClient(u.w.svc.mcpUrl, u.token, era);
    try {
      await client.listTools(); // the client validates calls against what it listed
      const staged = (await client.callTool({
        name: 'fs__write_file',
        arguments: { path: join(dir, `${era}.txt`), content: era },
      })) as ToolAnswer;
      expect(staged.isError ?? false).toBe(false);
      expect(staged.structuredContent).toMatchObject({ status: 'pending_approval' });
      // the desk's title names the file, not only the tool and the server
      expect((staged.structuredContent as { preview: { summary: string } }).preview.summary).toBe(
        `write_file ${join(dir, `${era}.txt`)} on upstream fs`,
      );
      const read = (await client.callTool({
        name: 'fs__read_text_file',
        arguments: { path: join(dir, 'a.txt') },
      })) as ToolAnswer;
      expect(read.structuredContent).toEqual({ content: 'before\n' });
    } finally {
      await client.close();
    }
  });
});

describe('the Inspector CLI (0.15, SDK v1, 2025 era)', () => {
  const inspector = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [INSPECTOR, '--cli', proxy.url, ...args],
        { timeout: 25_000, killSignal: 'SIGKILL', maxBuffer: 8 << 20 },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
      ),
    );

  it('calls a staged write of a tool with an outputSchema and prints the staging receipt', async () => {
    const run = await inspector([
      '--method',
      'tools/call',
      '--tool-name',
      'fs__write_file',
      '--tool-arg',
      `path=${join(dir, 'inspector.txt')}`,
      'content=hi',
    ]);
    expect(run.stderr).not.toContain('must have required property');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ structuredContent: { status: 'pending_approval' } });
  });
});

describe('the real result, once applied', () => {
  it('reaches a task client through its task as the upstream’s own result, valid for its schema', async () => {
    const file = join(dir, 'task.txt');
    const rpc = async (method: string, params: Record<string, unknown>) => {
      const res = await rawPost(
        u.w.svc.mcpUrl,
        {
          jsonrpc: '2.0',
          id: 1,
          method,
          params: {
            ...params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'task-client', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
            },
          },
        },
        {
          Authorization: `Bearer ${u.token}`,
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': method,
          'Mcp-Name': String(params.name ?? params.taskId),
        },
      );
      return ((await res.json()) as { result: Record<string, unknown> }).result;
    };
    const task = await rpc('tools/call', { name: 'fs__write_file', arguments: { path: file, content: 'via task' } });
    expect(task).toMatchObject({ resultType: 'task', status: 'working' });
    await u.ok('POST', `staged/${String(task.taskId)}/confirm`);
    const done = await until(async () => {
      const t = await rpc('tasks/get', { taskId: task.taskId });
      return t.status === 'completed' ? t : null;
    });
    const result = done!.result as ToolAnswer;
    expect(await readFile(file, 'utf8')).toBe('via task');
    // the upstream's answer itself: its text and its structured content, which its outputSchema requires
    expect(result.structuredContent).toEqual({ content: expect.stringContaining('Successfully wrote') });
    expect(result.content).toEqual([{ type: 'text', text: result.structuredContent!.content }]);
  });

  it('a write the policy runs without approval answers its receipt, valid for the listing', async () => {
    const base = await readFile(`${REPO}policy/default.cedar`, 'utf8');
    await u.ok('PUT', 'policy', {
      text: `${base}\npermit (principal, action == Action::"run_without_approval", resource == Tool::"fs__create_directory");\n`,
    });
    const client = await connectClient(u.w.svc.mcpUrl, u.token, 'modern');
    try {
      await client.listTools();
      const r = (await client.callTool({
        name: 'fs__create_directory',
        arguments: { path: join(dir, 'made') },
      })) as ToolAnswer;
      expect(r.isError ?? false).toBe(false);
      expect(r.structuredContent).toMatchObject({
        status: 'confirmed',
        result: { structuredContent: { content: expect.stringContaining('Successfully created') } },
      });
    } finally {
      await client.close();
    }
  });
});

describe('server-everything: a read with an outputSchema, then marked a write by a person', () => {
  beforeAll(async () => {
    await u.ok('POST', 'upstreams', {
      id: 'ev',
      transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
    });
  }, 60_000);

  it('as a read keeps its schema and its answer passes the SDK client; as a write it lists none and stages', async () => {
    const client = await connectClient(u.w.svc.mcpUrl, u.token, 'modern');
    try {
      const listed = async () =>
        ((await client.listTools()).tools as Listed[]).find((t) => t.name === 'ev__get-structured-content')!;
      expect((await listed()).outputSchema).toMatchObject({ required: ['temperature', 'conditions', 'humidity'] });
      const read = (await client.callTool({
        name: 'ev__get-structured-content',
        arguments: { location: 'Chicago' },
      })) as ToolAnswer;
      expect(read.structuredContent).toMatchObject({ temperature: 36 });
      await u.ok('POST', 'upstreams/ev/review', { write: ['get-structured-content'] });
      const asWrite = await until(async () => {
        const t = await listed();
        return t._meta?.['gatehouse/write'] === true ? t : null;
      });
      expect(asWrite!.outputSchema).toBeUndefined();
      expect(asWrite!._meta?.[SCHEMA_KEY]).toMatchObject({ required: ['temperature', 'conditions', 'humidity'] });
      const staged = (await client.callTool({
        name: 'ev__get-structured-content',
        arguments: { location: 'Chicago' },
      })) as ToolAnswer;
      expect(staged.structuredContent).toMatchObject({ status: 'pending_approval' });
    } finally {
      await client.close();
    }
  });
});
