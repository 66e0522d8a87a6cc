import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PRINCIPALS } from '../../../main/contract/index.ts';
import { defineTool } from '../../../main/core/calls/tool.ts';
import { MemoryStagedStore } from '../../../main/core/staging/staged-store.ts';
import { openCore, runtimePlugin, type Core } from '../../helpers/core.ts';

// Bound to what was shown, and revoking a token: an approval is
// bound to the hashes of the arguments, the preview shown and (upstream) the
// tool's definition; a write whose token was revoked or narrowed away cannot
// be approved. In the core, through `invoke` as the desk calls it.

let core: Core;
beforeEach(async () => {
  core = await openCore();
});

async function stage(
  tokenId: string,
  name = 'pages_update',
  args: Record<string, unknown> = { id: 1, title: 'Agent title' },
): Promise<string> {
  const out = await core.pipeline.call(name, args, core.ctxOf(tokenId));
  if (out.kind !== 'result') throw new Error(`not staged: ${out.message}`);
  return (out.output.structured as { staged_id: string }).staged_id;
}
const decisionsOf = (id: string) => core.audit.entries.filter((e) => e.staged_id === id && e.result !== 'staged');
const title = () => core.siteStore.read().pages.find((p) => p.id === 1)?.title;

describe('an approval is bound to what the person saw', () => {
  it("records the hashes when staged; the desk sends the preview hash back; the decision's audit line carries them", async () => {
    const t = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id);
    const shown = await core.invoke('staged.get', { id }, PRINCIPALS.appConsole);
    if (!shown.ok) throw new Error(shown.message);
    expect(shown.data.preview_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(shown.data.payload_hash).toMatch(/^[0-9a-f]{64}$/);
    const done = await core.invoke(
      'staged.confirm',
      { id, preview_hash: shown.data.preview_hash! },
      PRINCIPALS.appConsole,
    );
    expect(done.ok && done.data.status).toBe('confirmed');
    expect(decisionsOf(id)).toEqual([
      expect.objectContaining({
        result: 'confirmed',
        binding: { args: shown.data.payload_hash, preview: shown.data.preview_hash, definition: null },
      }),
    ]);
  });

  it('a preview hash other than the one shown is refused as stale and audited; the write stays pending for a fresh look', async () => {
    const t = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id);
    const r = await core.invoke('staged.confirm', { id, preview_hash: 'f'.repeat(64) }, PRINCIPALS.tray);
    expect(r).toMatchObject({
      ok: false,
      code: 'stale_approval',
      message: expect.stringMatching(/not the one staged write .* shows now/),
    });
    expect(core.staging.get(id).status).toBe('pending');
    expect(title()).not.toBe('Agent title');
    expect(decisionsOf(id)).toEqual([
      expect.objectContaining({
        result: 'denied',
        error_code: 'stale_approval',
        principal: PRINCIPALS.tray,
        binding: expect.objectContaining({ preview: core.staging.get(id).preview_hash }),
      }),
    ]);
    const bad = await core.invoke('staged.confirm', { id, preview_hash: 'not-a-hash' }, PRINCIPALS.tray);
    expect(bad).toMatchObject({ ok: false, code: 'invalid_value' });
  });

  it('stale case 1: arguments changed since they were shown (the stored record edited) -> refused, failed, audited with the hashes', async () => {
    const t = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id);
    const item = core.staging.get(id);
    const hash = item.preview_hash!;
    // What a changed record looks like to the next start: the same id, other arguments.
    const store = new MemoryStagedStore([{ ...item, payload: { ...item.payload, title: 'Something else' } }]);
    const { Staging } = await import('../../../main/core/staging/staging.ts');
    const again = new Staging({
      store,
      users: (x) => core.users.byId(x),
      registry: core.registry,
      auditor: core.auditor,
      events: core.events,
      clock: core.clock,
      auditTrail: core.audit,
      settings: () => core.settings.get(),
      usage: { record: () => {} },
    });
    await expect(
      again.confirm(id, { kind: 'person', principal: PRINCIPALS.cliDirect, preview_hash: hash }),
    ).rejects.toMatchObject({ code: 'stale_approval', details: { changed: 'arguments' } });
    expect(again.get(id)).toMatchObject({ status: 'failed', error_code: 'stale_approval' });
    expect(title()).not.toBe('Something else');
    expect(decisionsOf(id)).toEqual([
      expect.objectContaining({
        result: 'error',
        error_code: 'stale_approval',
        binding: { args: item.payload_hash, preview: hash, definition: null },
      }),
    ]);
  });

  it('stale case 2: a preview built again from the arguments now differs from the one shown -> refused', async () => {
    let rate = '1.00';
    const rt = runtimePlugin('quotes', [
      defineTool({
        name: 'quote_send',
        title: 'Send a quote',
        description: 'x',
        plugin: 'quotes',
        feature: 'site.pages.write',
        capability: 'edit_pages',
        write: true,
        input: z.object({ amount: z.number() }),
        repeatablePreview: true,
        preview: async (input) => ({
          preview: {
            summary: `Send ${input.amount} at ${rate}`,
            kind: 'arguments' as const,
            changes: [],
            arguments: input,
          },
          payload: input,
          target: null,
          target_version: null,
        }),
        apply: async () => ({ structured: { sent: true } }),
      }),
    ]);
    core.registry.add(rt.plugin);
    const t = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id, 'quote_send', { amount: 5 });
    const hash = core.staging.get(id).preview_hash!;
    rate = '9.99';
    const r = await core.invoke('staged.confirm', { id, preview_hash: hash }, PRINCIPALS.appConsole);
    expect(r).toMatchObject({
      ok: false,
      code: 'stale_approval',
      message: expect.stringMatching(/now differs from the one shown/),
    });
    expect(core.staging.get(id)).toMatchObject({ status: 'failed', error_code: 'stale_approval' });
    expect(decisionsOf(id)[0]).toMatchObject({
      result: 'error',
      error_code: 'stale_approval',
      binding: { preview: hash },
    });
  });

  it("a secret in the arguments never reaches the preview, the desk's payload or the audit", async () => {
    const t = await core.tokenFor('writer', 'editor');
    const secret = `ghp_${'A1b2C3d4E5'.repeat(4)}`;
    const id = await stage(t.record.id, 'pages_update', { id: 1, title: `token ${secret}` });
    const shown = await core.invoke('staged.get', { id }, PRINCIPALS.appConsole);
    expect(JSON.stringify(shown)).not.toContain(secret);
    expect(JSON.stringify(core.audit.entries)).not.toContain(secret);
    // the write itself is not changed: a person who approves applies what the agent sent
    expect(JSON.stringify(core.staging.get(id).payload)).toContain(secret);
  });
});

describe('revoked and narrowed tokens', () => {
  it('revoking a token discards its pending writes (token_revoked), audited with the person who revoked as principal', async () => {
    const t = await core.tokenFor('writer', 'editor');
    const other = await core.tokenFor('writer', 'editor');
    const [a, b, kept] = [
      await stage(t.record.id),
      await stage(t.record.id, 'pages_update', { id: 2, title: 'x' }),
      await stage(other.record.id),
    ];
    const r = await core.invoke('tokens.revoke', { id: t.record.id }, PRINCIPALS.cliViaService);
    expect(r.ok).toBe(true);
    for (const id of [a, b]) {
      expect(core.staging.get(id)).toMatchObject({
        status: 'discarded',
        error_code: 'token_revoked',
        decided_by: PRINCIPALS.cliViaService,
      });
      expect(decisionsOf(id)).toEqual([
        expect.objectContaining({
          result: 'discarded',
          error_code: 'token_revoked',
          principal: PRINCIPALS.cliViaService,
          binding: expect.objectContaining({ args: expect.any(String) }),
        }),
      ]);
    }
    expect(core.staging.get(kept).status).toBe('pending');
  });

  it('a revocation whose discards did not happen (a crash between): the desk shows it blocked, and a confirm is refused and discards it', async () => {
    const t = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id);
    await core.tokens.revoke(t.record.id);
    const list = await core.invoke('staged.list', { status: 'pending' }, PRINCIPALS.appConsole);
    expect(list.ok && list.data.find((x) => x.id === id)?.blocked).toBe('token_revoked');
    const r = await core.invoke('staged.confirm', { id }, PRINCIPALS.appConsole);
    expect(r).toMatchObject({ ok: false, code: 'token_revoked' });
    expect(core.staging.get(id)).toMatchObject({ status: 'discarded', error_code: 'token_revoked' });
    expect(title()).not.toBe('Agent title');
  });

  it("a narrowed token's write (its user demoted, its profile shrunk) is blocked: no approve on the desk, a confirm refused and audited, left for a person to discard", async () => {
    const t = await core.tokenFor('writer', 'editor');
    const id = await stage(t.record.id);
    expect(
      (await core.invoke('users.setRole', { login: 'writer', role: 'subscriber' }, PRINCIPALS.appConsole)).ok,
    ).toBe(true);
    const list = await core.invoke('staged.list', { status: 'pending' }, PRINCIPALS.appConsole);
    expect(list.ok && list.data.find((x) => x.id === id)?.blocked).toBe('token_narrowed');
    const refused = await core.invoke('staged.confirm', { id }, PRINCIPALS.appConsole);
    expect(refused).toMatchObject({ ok: false, code: 'token_narrowed' });
    expect(core.staging.get(id).status).toBe('pending');
    expect(decisionsOf(id)).toEqual([
      expect.objectContaining({
        result: 'denied',
        error_code: 'token_narrowed',
        principal: PRINCIPALS.appConsole,
        binding: expect.objectContaining({ args: expect.any(String) }),
      }),
    ]);
    expect(title()).not.toBe('Agent title');
    // undone, it is approvable again
    await core.invoke('users.setRole', { login: 'writer', role: 'editor' }, PRINCIPALS.appConsole);
    const restored = await core.invoke('staged.get', { id }, PRINCIPALS.appConsole);
    expect(restored.ok && restored.data.blocked).toBeFalsy();

    await core.tokenFor('pat', 'editor'); // makes the user pat
    await core.invoke(
      'profiles.create',
      { name: 'pages', tools: ['pages_update', 'pages_list'] },
      PRINCIPALS.appConsole,
    );
    const bound = await core.tokens.create('bound', core.users.byLogin('pat')!, { profile: 'pages' });
    const second = await stage(bound.record.id);
    await core.options.update((d) => {
      d.profiles.find((x) => x.name === 'pages')!.tools = ['pages_list'];
    });
    const after = await core.invoke('staged.get', { id: second }, PRINCIPALS.appConsole);
    expect(after.ok && after.data.blocked).toBe('token_narrowed');
    expect(await core.invoke('staged.confirm', { id: second }, PRINCIPALS.cliViaService)).toMatchObject({
      ok: false,
      code: 'token_narrowed',
    });
    expect((await core.invoke('staged.discard', { id: second }, PRINCIPALS.cliViaService)).ok).toBe(true);
  });
});
