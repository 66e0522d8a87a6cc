import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PREFIX } from '../../main/contract/health.ts';
import type { PolicyView } from '../../main/contract/policy.ts';
import { connectClient, startTestService } from '../helpers/service.ts';

/**
 * The tool-call policy on a real service, called by the real SDK client:
 * a forbid names its policy in the error and the audit, a permit of
 * run_without_approval applies one token's write at once and no other's,
 * an invalid policy is refused and the old one stays, and only a person
 * reaches the policy routes.
 */
let svc: Awaited<ReturnType<typeof startTestService>>;
let tokenA: { token: string; id: string };
let tokenB: { token: string; id: string };
let a: Client;
let b: Client;
type Answer = { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: Record<string, unknown> };

const setPolicy = async (text: string) => svc.core.dispatch('policy.set', { text });
const withDefault = async (extra: string) =>
  `${(await svc.core.dispatch('policy.get', {})).ok ? ((await svc.core.dispatch('policy.get', {})) as { data: PolicyView }).data.text : ''}\n${extra}`;
const audit = async (tool: string) => {
  const r = await svc.core.dispatch('audit.query', { tool, limit: 20 });
  if (!r.ok) throw new Error(r.message);
  return r.data.entries;
};

beforeAll(async () => {
  svc = await startTestService();
  const mk = async (label: string) => {
    const t = await svc.createToken({ label, user: 'admin' });
    return { token: t.token, id: t.record.id };
  };
  tokenA = await mk('client A');
  tokenB = await mk('client B');
  a = await connectClient(svc.mcpUrl, tokenA.token);
  b = await connectClient(svc.mcpUrl, tokenB.token);
}, 60_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await svc?.cleanup();
});

describe('the tool-call policy in tools/call', () => {
  it('under the default policy a read runs and a write is staged, as before policies', async () => {
    const list = (await a.callTool({ name: 'pages_list', arguments: {} })) as Answer;
    expect(list.isError).toBeFalsy();
    const made = (await a.callTool({ name: 'pages_create', arguments: { title: 'Default policy' } })) as Answer;
    expect(made.structuredContent).toMatchObject({ status: 'pending_approval' });
  });

  it('a forbidden tool is refused with the policy id in the error and in the audit line', async () => {
    const r = await setPolicy(
      await withDefault(
        '@id("no-page-lists")\nforbid (principal, action == Action::"call", resource == Tool::"pages_list");',
      ),
    );
    expect(r.ok).toBe(true);
    const refused = (await a.callTool({ name: 'pages_list', arguments: {} })) as Answer;
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toContain("'no-page-lists'");
    expect(refused.content[0]!.text).toContain('policy_denied');
    const [last] = await audit('pages_list');
    expect(last).toMatchObject({
      result: 'denied',
      error_code: 'policy_denied',
      policy: ['no-page-lists'],
      token_id: tokenA.id,
    });
    // other tools still run
    expect(((await a.callTool({ name: 'pages_search', arguments: { query: 'x' } })) as Answer).isError).toBeFalsy();
  });

  it("a permit of run_without_approval for one token applies that token's write at once, and only that token's", async () => {
    const permit = `@id("a-creates-unattended")\npermit (principal, action == Action::"run_without_approval", resource == Tool::"pages_create") when { principal.token.id == "${tokenA.id}" };`;
    expect((await setPolicy(await withDefault(permit))).ok).toBe(true);
    const fromA = (await a.callTool({ name: 'pages_create', arguments: { title: 'Unattended page' } })) as Answer;
    expect(fromA.isError).toBeFalsy();
    expect(fromA.structuredContent).toMatchObject({ status: 'confirmed', policy: ['a-creates-unattended'] });
    const id = fromA.structuredContent!.staged_id as string;
    const entries = await audit('pages_create');
    expect(entries.find((e) => e.staged_id === id && e.result === 'confirmed')).toMatchObject({
      policy: ['a-creates-unattended'],
      token_id: tokenA.id,
    });
    const pages = JSON.parse(await readFile(join(svc.dataDir, 'site.json'), 'utf8')) as {
      pages: Array<{ title: string }>;
    };
    expect(pages.pages.map((p) => p.title)).toContain('Unattended page');

    const fromB = (await b.callTool({ name: 'pages_create', arguments: { title: 'Waits for a person' } })) as Answer;
    expect(fromB.structuredContent).toMatchObject({ status: 'pending_approval' });
    const again = JSON.parse(await readFile(join(svc.dataDir, 'site.json'), 'utf8')) as {
      pages: Array<{ title: string }>;
    };
    expect(again.pages.map((p) => p.title)).not.toContain('Waits for a person');
  });

  it("an invalid policy is refused with the validator's message and the old one stays, in memory and on disk", async () => {
    const before = (await svc.core.dispatch('policy.get', {})) as { ok: true; data: PolicyView };
    const bad = await setPolicy(
      'permit (principal, action == Action::"call", resource) when { principal.nickname == "x" };',
    );
    expect(bad).toMatchObject({ ok: false, code: 'invalid_value' });
    expect((bad as { message: string }).message).toMatch(/does not validate.*nickname/);
    const unparsable = await setPolicy('permit (principal, action, resource');
    expect(unparsable).toMatchObject({ ok: false, code: 'invalid_value' });
    expect((unparsable as { message: string }).message).toMatch(/does not parse/);
    const after = (await svc.core.dispatch('policy.get', {})) as { ok: true; data: PolicyView };
    expect(after.data.text).toBe(before.data.text);
    const onDisk = JSON.parse(await readFile(join(svc.dataDir, 'options.json'), 'utf8')) as {
      policy: { text: string };
    };
    expect(onDisk.policy.text).toBe(before.data.text);
    // and it is still the policy in force
    expect(((await a.callTool({ name: 'pages_list', arguments: {} })) as Answer).content[0]!.text).toContain(
      "'no-page-lists'",
    );
  });

  it('refuses a client token on every policy route, whatever its user may do', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', 'policy'],
      ['POST', 'policy/check', { text: 'permit (principal, action, resource);' }],
      ['PUT', 'policy', { text: 'permit (principal, action, resource);' }],
      ['POST', 'policy/explain', { token_id: tokenA.id, tool: 'pages_list' }],
    ];
    for (const [method, path, body] of routes) {
      const res = await fetch(`${svc.baseUrl}${ADMIN_PREFIX}/${path}`, {
        method,
        headers: { Authorization: `Bearer ${tokenA.token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      expect([401, 403], `${method} ${path}`).toContain(res.status);
      expect(((await res.json()) as { ok: boolean }).ok).toBe(false);
    }
    // and the policy did not change
    expect(((await svc.core.dispatch('policy.get', {})) as { data: PolicyView }).data.text).toContain('no-page-lists');
  });

  it('no MCP tool reads or changes the policy, in either approval mode', async () => {
    for (const mode of ['admin', 'agent'] as const) {
      await svc.core.dispatch('settings.update', { approval_mode: mode });
      const tools = (await a.listTools()).tools.map((t) => `${t.name} ${t.description ?? ''}`);
      expect(tools.filter((t) => /polic|cedar/i.test(t))).toEqual([]);
      const r = await a
        .callTool({ name: 'policy_set', arguments: { text: 'permit (principal, action, resource);' } })
        .catch((e: Error) => e);
      expect(r).toBeInstanceOf(Error);
    }
  });

  it('explains a decision with the policies that made it', async () => {
    const r = await svc.core.dispatch('policy.explain', {
      token_id: tokenA.id,
      tool: 'pages_create',
      args: { title: 'x' },
    });
    expect(r).toMatchObject({
      ok: true,
      data: {
        outcome: 'runs_without_approval',
        call: { decision: 'allow', policies: ['role-capabilities'] },
        run_without_approval: { decision: 'allow', policies: ['a-creates-unattended'] },
      },
    });
    const other = await svc.core.dispatch('policy.explain', {
      token_id: tokenB.id,
      tool: 'pages_create',
      args: { title: 'x' },
    });
    expect(other).toMatchObject({ ok: true, data: { outcome: 'staged' } });
    expect((other as { data: { summary: string } }).data.summary).toContain('no policy permits run_without_approval');
    const refused = await svc.core.dispatch('policy.explain', { token_id: tokenB.id, tool: 'pages_list' });
    expect(refused).toMatchObject({
      ok: true,
      data: { outcome: 'refused', call: { decision: 'deny', policies: ['no-page-lists'] } },
    });
  });
});
