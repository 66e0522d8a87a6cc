import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PolicyView } from '../../main/contract/policy.ts';
import type { StagedResponse } from '../../main/contract/staged.ts';
import { connectClient, startTestService } from '../helpers/service.ts';

/**
 * The policy asked again at a confirm (docs/policy.md, "Confirming a staged
 * write"): a write staged while its tool was allowed, then forbidden by a
 * policy, is refused with `policy_denied` (audited with the policy ids)
 * whether the agent confirms it in `agent` mode or a person approves it; the
 * write stays pending, nothing is applied, and it goes through once the
 * policy no longer forbids it.
 */
let svc: Awaited<ReturnType<typeof startTestService>>;
let client: Client;
let tokenId: string;
let defaultText: string;
type Answer = { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: Record<string, unknown> };

const FORBID =
  '@id("no-page-updates")\nforbid (principal, action == Action::"call", resource == Tool::"pages_update") when { context.arg_names.contains("title") };';
const title = () => svc.core.siteStore.read().pages.find((p: { id: number }) => p.id === 1)?.title;
const setPolicy = async (text: string) => expect((await svc.dispatch('policy.set', { text })).ok).toBe(true);
const entriesOf = async (id: string) =>
  (await svc.core.audit.query({ limit: 200 })).entries.filter((e: { staged_id?: string | null }) => e.staged_id === id);

async function stage(t: string): Promise<string> {
  const res = (await client.callTool({ name: 'pages_update', arguments: { id: 1, title: t } })) as Answer;
  expect(res.isError).toBeFalsy();
  return (res.structuredContent as unknown as StagedResponse).staged_id;
}

beforeAll(async () => {
  svc = await startTestService();
  const t = await svc.createToken({ label: 'agent', user: 'admin' });
  tokenId = t.record.id;
  client = await connectClient(svc.mcpUrl, t.token);
  const view = await svc.dispatch('policy.get', {});
  defaultText = view.ok ? (view.data as PolicyView).text : '';
  expect(defaultText).toContain('permit');
}, 60_000);
afterAll(async () => {
  await client?.close();
  await svc?.cleanup();
});
beforeEach(async () => {
  await setPolicy(defaultText);
});

describe('a tool forbidden after its write was staged', () => {
  it("the agent's own confirm (agent mode) is refused with policy_denied, audited with the policy id; the write stays pending", async () => {
    await svc.dispatch('settings.update', { approval_mode: 'agent' });
    const id = await stage('Agent-confirmed');
    const before = title();
    await setPolicy(`${defaultText}\n${FORBID}`);

    const res = (await client.callTool({ name: 'staged_writes_confirm', arguments: { staged_id: id } })) as Answer;
    expect(res.isError).toBe(true);
    expect(res.content[0]!.text).toContain('policy_denied');
    expect(res.content[0]!.text).toContain("'no-page-updates'");
    expect(svc.core.staging.get(id).status).toBe('pending');
    expect(title()).toBe(before);
    const denied = (await entriesOf(id)).find((e: { result: string }) => e.result === 'denied');
    expect(denied).toMatchObject({ error_code: 'policy_denied', policy: ['no-page-updates'], token_id: tokenId });

    // The same confirm once the policy permits the call again: applied.
    await setPolicy(defaultText);
    const ok = (await client.callTool({ name: 'staged_writes_confirm', arguments: { staged_id: id } })) as Answer;
    expect(ok.isError).toBeFalsy();
    expect(title()).toBe('Agent-confirmed');
    await svc.dispatch('settings.update', { approval_mode: 'admin' });
  });

  it("a person's approval is refused the same way (decisions.md): the policy is the person's own rule; discarding still works", async () => {
    const id = await stage('Person-approved');
    const before = title();
    await setPolicy(`${defaultText}\n${FORBID}`);
    const hash = svc.core.staging.get(id).preview_hash!;

    const r = await svc.dispatch('staged.confirm', { id, preview_hash: hash });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.code).toBe('policy_denied');
    expect(!r.ok && r.message).toContain("'no-page-updates'");
    expect(svc.core.staging.get(id).status).toBe('pending');
    expect(title()).toBe(before);
    // The principal asked about is the token that staged the write.
    expect((await entriesOf(id)).find((e: { result: string }) => e.result === 'denied')).toMatchObject({
      error_code: 'policy_denied',
      policy: ['no-page-updates'],
    });

    const gone = await svc.dispatch('staged.discard', { id });
    expect(gone.ok && gone.data.status).toBe('discarded');
  });

  it('a policy that forbids something else does not stand in the way of a confirm', async () => {
    const id = await stage('Unrelated forbid');
    await setPolicy(
      `${defaultText}\n@id("no-lists")\nforbid (principal, action == Action::"call", resource == Tool::"pages_list");`,
    );
    const r = await svc.dispatch('staged.confirm', { id, preview_hash: svc.core.staging.get(id).preview_hash! });
    expect(r.ok && r.data.status).toBe('confirmed');
    expect(title()).toBe('Unrelated forbid');
  });
});
