import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { connectClient, startTestService } from '../helpers/service.ts';

/** One rule for what a client sees and may call: a tool the custom policy forbids is neither listed nor callable, in both eras. */
let svc: Awaited<ReturnType<typeof startTestService>>;
let token: string;
let ciToken: string;

const EXTRA = `
@id("no-page-deletes")
forbid (principal, action, resource == Tool::"pages_delete");

@id("ci-no-search")
forbid (principal, action, resource == Tool::"pages_search") when { principal.token.label == "ci" };

@id("updates-of-page-1-only")
forbid (principal, action == Action::"call", resource == Tool::"pages_update")
unless { context.args.hasTag("id") && context.args.getTag("id") == "1" };
`;

beforeAll(async () => {
  svc = await startTestService();
  token = (await svc.createToken({ label: 'agent' })).token;
  ciToken = (await svc.createToken({ label: 'ci' })).token;
});
afterAll(async () => svc?.cleanup());

for (const era of ['legacy', 'modern'] as const) {
  describe(era === 'legacy' ? '2025-11-25' : '2026-07-28', () => {
    let client: Client;
    let ci: Client;
    beforeAll(async () => {
      // each era starts from the shipped default, then sets the custom policy itself
      await svc.core.options.update((d) => void (d.policy = null));
      const shown = await svc.dispatch('policy.get', {});
      if (!shown.ok) throw new Error(shown.message);
      client = await connectClient(svc.mcpUrl, token, era);
      ci = await connectClient(svc.mcpUrl, ciToken, era);
      const listedBefore = (await client.listTools()).tools.map((t) => t.name);
      expect(listedBefore).toEqual(expect.arrayContaining(['pages_delete', 'pages_search', 'pages_update']));
      const set = await svc.dispatch('policy.set', { text: `${shown.data.text}\n${EXTRA}` });
      if (!set.ok) throw new Error(set.message);
    });
    afterAll(async () => {
      await client?.close();
      await ci?.close();
    });

    it('a tool the policy forbids whatever the call is not listed, and calling it is refused by the policy', async () => {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain('pages_delete');
      expect(names).toEqual(expect.arrayContaining(['pages_get', 'pages_search', 'pages_update']));
      const res = await client.callTool({ name: 'pages_delete', arguments: { id: 2 } });
      expect(res.isError).toBe(true);
      expect(JSON.stringify(res.content)).toContain("'no-page-deletes'");
    });

    it('a rule on the token hides the tool from that token only', async () => {
      expect((await ci.listTools()).tools.map((t) => t.name)).not.toContain('pages_search');
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('pages_search');
    });

    it('a tool forbidden for some arguments stays listed; those calls are refused, the others staged', async () => {
      const refused = await client.callTool({ name: 'pages_update', arguments: { id: 2, title: 'No' } });
      expect(JSON.stringify(refused.content)).toContain("'updates-of-page-1-only'");
      const staged = await client.callTool({ name: 'pages_update', arguments: { id: 1, title: `Yes ${era}` } });
      expect(staged.isError).toBeFalsy();
      expect(staged.structuredContent).toMatchObject({ status: 'pending_approval' });
    });
  });
}
