import { beforeEach, describe, expect, it } from 'vitest';
import { PRINCIPALS } from '../../main/contract/index.ts';
import { openCore, type Core } from '../helpers/core.ts';

// "Who may approve", in the core: an agent decides only through the MCP tools
// of `agent` mode, only its own user's writes, only those of tools its token
// may call at the moment it decides — checked by staging itself, whatever
// the MCP layer showed the agent earlier.

let core: Core;
beforeEach(async () => {
  core = await openCore();
});

async function stage(tokenId: string, title = 'Agent title'): Promise<string> {
  const out = await core.pipeline.call('pages_update', { id: 1, title }, core.ctxOf(tokenId));
  if (out.kind !== 'result') throw new Error(`not staged: ${out.message}`);
  return (out.output.structured as { staged_id: string }).staged_id;
}
const agent = (tokenId: string) => ({ kind: 'agent' as const, ctx: core.ctxOf(tokenId) });
const title = () => core.siteStore.read().pages.find((p) => p.id === 1)?.title;

describe('agent decisions', () => {
  it('in admin mode an agent confirms nothing, even calling the core directly; the write stays for a person', async () => {
    const t = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id);
    const before = title();
    await expect(core.staging.confirm(id, agent(t.record.id))).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/approval_mode is 'admin'/),
    });
    await expect(core.staging.discard(id, agent(t.record.id))).rejects.toMatchObject({ code: 'forbidden' });
    expect(core.staging.get(id).status).toBe('pending');
    expect(title()).toBe(before);
    const r = await core.invoke('staged.confirm', { id }, PRINCIPALS.tray);
    expect(r.ok && r.data.status).toBe('confirmed');
    expect(title()).toBe('Agent title');
  });

  it('in agent mode an agent confirms its own write, recorded as that token over MCP', async () => {
    await core.settings.update({ approval_mode: 'agent' });
    const t = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id);
    const done = await core.staging.confirm(id, agent(t.record.id));
    expect(done).toMatchObject({
      status: 'confirmed',
      decided_by: { kind: 'token', surface: 'mcp', token_id: t.record.id, user_id: t.user.id, login: 'writer' },
    });
    expect(core.audit.entries.find((e) => e.result === 'confirmed')?.principal).toEqual(done.decided_by);
  });

  it("a write staged before its tool was disabled is not the agent's to confirm any more", async () => {
    await core.settings.update({ approval_mode: 'agent' });
    const t = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id);
    await core.settings.update({ disabled_tools: ['pages_update'] });
    await expect(core.staging.confirm(id, agent(t.record.id))).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/may not call 'pages_update' now/),
    });
    expect(core.staging.get(id).status).toBe('pending');
  });

  it('a narrower or read-only token of the same user cannot confirm what a wider one staged', async () => {
    await core.settings.update({ approval_mode: 'agent' });
    const wide = await core.tokenFor('writer', 'editor');
    const narrow = await core.tokenFor('writer', 'editor', { tools: ['staged_writes_confirm', 'pages_get'] });
    const readOnly = await core.tokenFor('writer', 'editor', { read_only: true });
    const id = await stage(wide.record.id);
    for (const t of [narrow, readOnly]) {
      await expect(core.staging.confirm(id, agent(t.record.id))).rejects.toMatchObject({ code: 'forbidden' });
    }
    expect(core.staging.get(id).status).toBe('pending');
    expect((await core.staging.confirm(id, agent(wide.record.id))).status).toBe('confirmed');
  });

  it('a user demoted after staging cannot decide its old write, and does not spoil it for a person', async () => {
    await core.settings.update({ approval_mode: 'agent' });
    const t = await core.tokenFor('writer', 'contributor');
    // a contributor edits only its own pages: give it one
    const created = await core.pipeline.call('pages_create', { title: 'Mine' }, core.ctxOf(t.record.id));
    const createId = created.kind === 'result' ? (created.output.structured as { staged_id: string }).staged_id : '';
    await core.users.setRole('writer', 'subscriber');
    await expect(core.staging.confirm(createId, agent(t.record.id))).rejects.toMatchObject({ code: 'forbidden' });
    expect(core.staging.get(createId).status).toBe('pending');
  });

  it("never another user's write: it does not exist for that agent", async () => {
    await core.settings.update({ approval_mode: 'agent' });
    const mine = await core.tokenFor('writer', 'editor');
    const other = await core.tokenFor('other', 'editor');
    const id = await stage(mine.record.id);
    await expect(core.staging.confirm(id, agent(other.record.id))).rejects.toMatchObject({ code: 'staged_not_found' });
    expect(core.staging.get(id).status).toBe('pending');
  });
});
