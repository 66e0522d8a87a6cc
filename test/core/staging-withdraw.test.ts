import { beforeEach, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../helpers/core.ts';

// Staging.withdraw (MCP tasks/cancel): the token that staged a write takes it
// back, in either approval mode; no other token, not even of the same user,
// and never a write already decided or being applied.

let core: Core;
beforeEach(async () => {
  core = await openCore();
});

async function stage(tokenId: string): Promise<string> {
  const out = await core.pipeline.call('pages_update', { id: 1, title: 'Withdrawn title' }, core.ctxOf(tokenId));
  if (out.kind !== 'result') throw new Error(`not staged: ${out.message}`);
  return (out.output.structured as { staged_id: string }).staged_id;
}

describe('withdraw', () => {
  it('in admin mode the staging token withdraws its write: discarded, audited with that token; nothing applied', async () => {
    const t = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id);
    const done = await core.staging.withdraw(id, core.ctxOf(t.record.id));
    expect(done).toMatchObject({
      status: 'discarded',
      decided_by: { kind: 'token', surface: 'mcp', token_id: t.record.id },
    });
    expect(core.audit.entries.filter((e) => e.staged_id === id).map((e) => e.result)).toEqual(['staged', 'discarded']);
    expect(core.siteStore.read().pages.find((p) => p.id === 1)?.title).not.toBe('Withdrawn title');
  });

  it('another token, even of the same user, finds nothing to withdraw; a decided write is not withdrawn', async () => {
    const t = await core.tokenFor('writer', 'editor');
    const sibling = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id);
    await expect(core.staging.withdraw(id, core.ctxOf(sibling.record.id))).rejects.toMatchObject({
      code: 'staged_not_found',
    });
    expect(core.staging.get(id).status).toBe('pending');
    await core.staging.confirm(id, {
      kind: 'person',
      principal: { kind: 'person', surface: 'tray', via: 'app', session: null },
    });
    await expect(core.staging.withdraw(id, core.ctxOf(t.record.id))).rejects.toMatchObject({
      code: 'staged_already_decided',
    });
    expect(core.staging.get(id).status).toBe('confirmed');
  });
});
