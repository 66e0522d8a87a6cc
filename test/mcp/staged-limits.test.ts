import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { STAGED_LIMITS } from '../../main/contract/staged.ts';
import { connectClient, startTestService } from '../helpers/service.ts';

// A contributor could once stage hundreds of 200 KB pending writes that were cloned and
// rewritten on every store update. Now each token has a bounded number of pending writes,
// they live one file each in staged/, and options.json never holds them.

let svc: Awaited<ReturnType<typeof startTestService>>;
let client: Client;

beforeAll(async () => {
  svc = await startTestService();
  await svc.dispatch('users.add', { login: 'carl', role: 'contributor' });
  client = await connectClient(svc.mcpUrl, (await svc.createToken({ label: 'contributor', user: 'carl' })).token);
});
afterAll(async () => {
  await client?.close();
  await svc?.cleanup();
});

describe('bounded staging over MCP', () => {
  it(`a token gets ${STAGED_LIMITS.pendingPerToken} pending writes, then staged_limit_reached; options.json stays the same size`, async () => {
    const options = join(svc.dataDir, 'options.json');
    await svc.core.options.flush();
    const content = `# Big\n\n${'Lorem ipsum dolor sit amet. '.repeat(7000)}`; // ~200 KB
    const sizeBefore = (await readFile(options)).length;
    for (let i = 0; i < STAGED_LIMITS.pendingPerToken; i++) {
      const r = await client.callTool({ name: 'pages_create', arguments: { title: `Big page ${i}`, content } });
      expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
    }
    const refused = await client.callTool({ name: 'pages_create', arguments: { title: 'One too many', content } });
    expect(refused.isError).toBe(true);
    const error = refused._meta?.['gatehouse/error'] as { code: string; message: string; scope: string; limit: number };
    expect(error).toMatchObject({ code: 'staged_limit_reached', scope: 'token', limit: STAGED_LIMITS.pendingPerToken });
    expect(error.message).toMatch(/already has 50 staged writes waiting for a decision/);

    expect((await readdir(join(svc.dataDir, 'staged'))).filter((n) => n.endsWith('.json'))).toHaveLength(
      STAGED_LIMITS.pendingPerToken,
    );
    await svc.core.stats.flush();
    await svc.core.options.flush();
    const after = await readFile(options, 'utf8');
    expect(after).not.toContain('Lorem ipsum');
    // stats counters may add a few bytes; the 10 MB of pending content is elsewhere
    expect(after.length - sizeBefore).toBeLessThan(2000);

    // deciding one frees room for one
    const first = svc.core.staging.list({ status: 'pending' })[0]!;
    expect((await svc.dispatch('staged.discard', { id: first.id })).ok).toBe(true);
    const again = await client.callTool({ name: 'pages_create', arguments: { title: 'Room again', content: 'short' } });
    expect(again.isError).toBeFalsy();
    const audit = await svc.core.audit.query({ result: 'error', tool: 'pages_create', limit: 5 });
    expect(audit.entries[0]?.error_code).toBe('staged_limit_reached');
  });
});
