import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startTestService } from '../helpers/service.ts';

let svc: Awaited<ReturnType<typeof startTestService>>;
beforeAll(async () => {
  svc = await startTestService();
  await svc.dispatch('users.add', { login: 'carl', role: 'contributor' });
});
afterAll(async () => svc?.cleanup());

const toolNames = async (token: string) => {
  const c = await connectClient(svc.mcpUrl, token);
  try {
    return (await c.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await c.close();
  }
};

describe('least privilege: narrowing a token', () => {
  it('--tools limits the token to those tools, and the narrowing shows in tokens list', async () => {
    const t = await svc.createToken({ label: 'narrow', scope: { tools: ['pages_get', 'site_identity'] } });
    expect(await toolNames(t.token)).toEqual(['pages_get', 'site_identity']);
    const listed = await svc.dispatch('tokens.list', {});
    expect(listed.ok && listed.data.find((r) => r.id === t.record.id)?.scope.tools).toEqual([
      'pages_get',
      'site_identity',
    ]);
  });

  it('--plugins limits the token to tools owned by those plugins', async () => {
    const t = await svc.createToken({ label: 'site only', scope: { plugins: ['gatehouse'] } });
    const names = await toolNames(t.token);
    expect(names).toContain('discover_tools');
    expect(names.some((n) => n.startsWith('pages_'))).toBe(false);
  });

  it('can never be wider than the user: a contributor token cannot name delete', async () => {
    await expect(
      svc.createToken({ label: 'wide', user: 'carl', scope: { tools: ['pages_delete'] } }),
    ).rejects.toMatchObject({ code: 'invalid_value' });
    await expect(svc.createToken({ label: 'typo', scope: { tools: ['pages_gett'] } })).rejects.toMatchObject({
      code: 'invalid_value',
    });
    await expect(svc.createToken({ label: 'typo', scope: { plugins: ['nope'] } })).rejects.toMatchObject({
      code: 'invalid_value',
    });
    const ok = await svc.createToken({ label: 'contrib', user: 'carl', scope: { tools: ['pages_get'] } });
    expect(await toolNames(ok.token)).toEqual(['pages_get']);
  });
});
