/**
 * A second real client no one here wrote: the MCP Inspector CLI (0.15, on SDK v1),
 * run as a child process against a real service. It cannot send headers, so it goes
 * through the test-only auth proxy, which adds the bearer token and nothing else.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService } from '../helpers/service.ts';
import { startAuthProxy, type AuthProxy } from '../helpers/auth-proxy.ts';

const INSPECTOR = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/inspector/cli/build/cli.js', import.meta.url),
);
const TIMEOUT_MS = 25_000;

let svc: Awaited<ReturnType<typeof startTestService>>;
let proxy: AuthProxy;
let tokenId: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `mcp-inspector --cli <proxy url> ...args`, killed after TIMEOUT_MS. */
function inspector(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [INSPECTOR, '--cli', proxy.url, ...args],
      { timeout: TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 8 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The CLI prints the result as pretty JSON on stdout; anything else is a failure worth seeing. */
async function inspectorJson<T>(args: string[]): Promise<T> {
  const run = await inspector(args);
  if (run.code !== 0)
    throw new Error(`inspector ${args.join(' ')} exited ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

type ToolList = {
  tools: {
    name: string;
    description?: string;
    inputSchema: { type: string };
    annotations?: { readOnlyHint?: boolean };
  }[];
};
type CallResult = {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

beforeAll(async () => {
  svc = await startTestService();
  const { token, record } = await svc.createToken({ label: 'inspector' });
  tokenId = record.id;
  proxy = await startAuthProxy(svc.mcpUrl, token);
});

afterAll(async () => {
  await proxy?.close();
  await svc?.cleanup();
});

describe('MCP Inspector CLI against Gatehouse', () => {
  it('tools/list shows the built-in and the site tools with their schemas and annotations', async () => {
    const { tools } = await inspectorJson<ToolList>(['--method', 'tools/list']);
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['site_identity', 'discover_tools', 'staged_writes_list', 'staged_writes_status']),
    );
    expect(names).toEqual(
      expect.arrayContaining([
        'pages_list',
        'pages_get',
        'pages_search',
        'pages_create',
        'pages_update',
        'pages_delete',
        'pages_publish',
        'seo_analyze_page',
        'seo_keyword_ideas',
        'translate_page',
      ]),
    );
    // approval_mode defaults to admin: the agent-side confirm/discard tools do not exist.
    expect(names).not.toContain('staged_writes_confirm');
    for (const t of tools) {
      expect(t.description, t.name).toBeTruthy();
      expect(t.inputSchema.type, t.name).toBe('object');
    }
    expect(tools.find((t) => t.name === 'pages_list')?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === 'pages_create')?.annotations?.readOnlyHint).toBe(false);
  });

  it('tools/call site_identity returns the seeded site as text and structured content', async () => {
    const res = await inspectorJson<CallResult>(['--method', 'tools/call', '--tool-name', 'site_identity']);
    expect(res.isError).toBeFalsy();
    const identity = res.structuredContent as { name: string; url: string; languages: string[] };
    expect(identity.name).toBe('Northbank Coffee Roasters');
    expect(identity.languages).toContain('en');
    expect(JSON.parse(res.content[0]?.text ?? '{}')).toMatchObject({ name: identity.name, url: identity.url });
  });

  it('tools/call pages_list paginates with an argument the CLI passes as key=value', async () => {
    const res = await inspectorJson<CallResult>([
      '--method',
      'tools/call',
      '--tool-name',
      'pages_list',
      '--tool-arg',
      'per_page=2',
    ]);
    expect(res.isError).toBeFalsy();
    const out = res.structuredContent as {
      pages: { id: number; slug: string; title: string }[];
      total: number;
      per_page: number;
      total_pages: number;
    };
    expect(out.per_page).toBe(2);
    expect(out.pages).toHaveLength(2);
    expect(out.total).toBeGreaterThan(2);
    expect(out.total_pages).toBe(Math.ceil(out.total / 2));
    expect(res.content[0]?.text).toContain(out.pages[0]!.title);
  });

  it('a hidden or unknown tool fails the CLI with the unknown-tool error, and the call is audited', async () => {
    const run = await inspector(['--method', 'tools/call', '--tool-name', 'no_such_tool']);
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toMatch(/-32602.*unknown tool: no_such_tool/);
    await svc.core.audit.flush();
    const page = await svc.core.audit.query({ limit: 100 });
    const entry = page.entries.find((e) => e.tool === 'no_such_tool');
    expect(entry).toMatchObject({ result: 'denied', error_code: 'unknown_tool', token_id: tokenId });
  });

  it('resources/list names the manual and the site identity', async () => {
    const { resources } = await inspectorJson<{ resources: { uri: string; name: string; mimeType?: string }[] }>([
      '--method',
      'resources/list',
    ]);
    const uris = resources.map((r) => r.uri);
    expect(uris).toEqual(expect.arrayContaining(['gatehouse://manual', 'gatehouse://site/identity']));
    expect(resources.find((r) => r.uri === 'gatehouse://manual')?.mimeType).toBe('text/markdown');
  });

  it('resources/read gatehouse://manual returns the operating manual as Markdown', async () => {
    const { contents } = await inspectorJson<{ contents: { uri: string; mimeType: string; text: string }[] }>([
      '--method',
      'resources/read',
      '--uri',
      'gatehouse://manual',
    ]);
    expect(contents).toHaveLength(1);
    expect(contents[0]).toMatchObject({ uri: 'gatehouse://manual', mimeType: 'text/markdown' });
    expect(contents[0]!.text).toMatch(/^# Gatehouse operating manual/);
    expect(contents[0]!.text).toContain('site_identity');
    expect(contents[0]!.text).toContain('staged');
  });
});
