import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagedResponse } from '../../main/contract/staged.ts';
import { connectClient, INIT, rawPost, startTestService } from '../helpers/service.ts';

// The desk names the client that asked for a write. A 2025-era client sends
// its clientInfo only in `initialize`, so a later tools/call is named after
// the last clientInfo seen with the token, which may be another process: the
// staged write and its audit entry say whether the name is this request's own.

let svc: Awaited<ReturnType<typeof startTestService>>;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.cleanup();
});

const pageId = () => svc.core.siteStore.read().pages[0]!.id as number;

async function stagedFrom(client: Awaited<ReturnType<typeof connectClient>>, title: string) {
  const res = await client.callTool({ name: 'pages_update', arguments: { id: pageId(), title } });
  const { staged_id } = res.structuredContent as StagedResponse;
  await svc.core.audit.flush();
  const audit = (await svc.core.audit.query({ limit: 50 })).entries.find(
    (e) => e.staged_id === staged_id && e.result === 'staged',
  )!;
  return { staged: svc.core.staging.get(staged_id), audit };
}

describe('where the client name of a staged write comes from', () => {
  it('2026-07-28: the request carries clientInfo, so the name is known', async () => {
    const { token } = await svc.createToken({ label: 'modern' });
    const client = await connectClient(svc.mcpUrl, token, 'modern');
    try {
      const { staged, audit } = await stagedFrom(client, 'Named by the request');
      expect(staged).toMatchObject({ client: 'gatehouse-test', client_source: 'request' });
      expect(audit).toMatchObject({ client: 'gatehouse-test', client_source: 'request' });
    } finally {
      await client.close();
    }
  });

  it('2025 era: the name is the last clientInfo seen with the token, marked as remembered', async () => {
    const { token } = await svc.createToken({ label: 'legacy' });
    // Another process with the same token initializes last, under another name.
    const client = await connectClient(svc.mcpUrl, token, 'legacy');
    const other = await rawPost(
      svc.mcpUrl,
      { ...INIT, params: { ...INIT.params, clientInfo: { name: 'someone-else', version: '9' } } },
      { Authorization: `Bearer ${token}` },
    );
    expect(other.status).toBe(200);
    try {
      const { staged, audit } = await stagedFrom(client, 'Named by a guess');
      expect(staged).toMatchObject({ client: 'someone-else', client_source: 'remembered' });
      expect(audit).toMatchObject({ client: 'someone-else', client_source: 'remembered' });
    } finally {
      await client.close();
    }
  });

  it('no clientInfo ever: the User-Agent, marked as such', async () => {
    const { token } = await svc.createToken({ label: 'raw' });
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'pages_update', arguments: { id: pageId(), title: 'Named by the UA' } },
    };
    const res = await rawPost(svc.mcpUrl, call, {
      Authorization: `Bearer ${token}`,
      'User-Agent': 'curl/8.0',
      'MCP-Protocol-Version': '2025-11-25',
    });
    expect(res.status).toBe(200);
    const pending = svc.core.staging.list({ status: 'pending' }).find((s) => s.token_label === 'raw')!;
    expect(pending).toMatchObject({ client: 'curl/8.0', client_source: 'user_agent' });
  });
});
