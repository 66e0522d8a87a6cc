import { describe, expect, it } from 'vitest';
import { PRINCIPALS } from '../main/contract/principal.ts';
import { createCedarEngine } from '../main/policy/cedar-engine.ts';
import { ctxForRole, echoTool, openCore, pipelineCore, runtimePlugin } from './helpers/core.ts';

/*
 * The test cores are the production assembly (main/assemble-core.ts) over memory adapters: a call through them
 * meets the policy gate, the storage guard and the confirm policy. Each of these failed against the hand-wired
 * helpers they replace, which built a pipeline with none of the three.
 */

const defaultPolicy = createCedarEngine({ activeText: () => null }).defaultText();
const withForbid = (tool: string, id: string) =>
  `${defaultPolicy}\n@id("${id}")\nforbid (principal, action == Action::"call", resource == Tool::"${tool}");\n`;

describe('the test core is the production assembly', () => {
  it('runs the policy gate: a policy that forbids pages_get refuses the call, audited with the policy id', async () => {
    const core = await openCore();
    const t = await core.tokenFor('writer', 'editor');
    const before = await core.pipeline.call('pages_get', { id: 1 }, core.ctxOf(t.record.id));
    expect(before.kind).toBe('result');

    const set = await core.invoke(
      'policy.set',
      { text: withForbid('pages_get', 'no-page-reads') },
      PRINCIPALS.cliViaService,
    );
    expect(set.ok).toBe(true);
    const after = await core.pipeline.call('pages_get', { id: 1 }, core.ctxOf(t.record.id));
    expect(after).toMatchObject({
      kind: 'refused',
      code: 'policy_denied',
      message: expect.stringContaining("'no-page-reads'"),
    });
    expect(core.audit.entries.at(-1)).toMatchObject({
      tool: 'pages_get',
      result: 'denied',
      error_code: 'policy_denied',
      policy: ['no-page-reads'],
    });
  });

  it('asks the policy again at a confirm: a write staged under one policy is refused under one that forbids it', async () => {
    const core = await openCore();
    const t = await core.tokenFor('writer', 'editor');
    const staged = await core.pipeline.call('pages_update', { id: 1, title: 'Agent title' }, core.ctxOf(t.record.id));
    if (staged.kind !== 'result') throw new Error(staged.message);
    const id = (staged.output.structured as { staged_id: string }).staged_id;
    await core.invoke('policy.set', { text: withForbid('pages_update', 'no-page-updates') }, PRINCIPALS.cliViaService);

    const shown = await core.invoke('staged.get', { id }, PRINCIPALS.appConsole);
    if (!shown.ok) throw new Error(shown.message);
    const r = await core.invoke(
      'staged.confirm',
      { id, preview_hash: shown.data.preview_hash! },
      PRINCIPALS.appConsole,
    );
    expect(r).toMatchObject({ ok: false, code: 'policy_denied' });
    expect(core.siteStore.read().pages.find((p) => p.id === 1)?.title).not.toBe('Agent title');
  });

  it("runs the storage guard: an audit log that refuses writes refuses the call before it runs (the call path's core)", async () => {
    const core = await pipelineCore();
    let ran = 0;
    core.registry.add(
      runtimePlugin('runtime', [echoTool('echo', 'runtime', { run: async () => (ran++, { structured: {} }) })]).plugin,
    );
    expect(await core.storage.ready()).toBeNull();
    const ctx = ctxForRole('editor');
    expect((await core.pipeline.call('echo', {}, ctx)).kind).toBe('result');
    expect(ran).toBe(1);
    core.memoryAudit.refusing = {
      part: 'audit',
      error: 'ENOSPC: no space left on device',
      since: new Date(0).toISOString(),
    };
    expect(await core.pipeline.call('echo', {}, ctx)).toMatchObject({ kind: 'refused', code: 'storage_unavailable' });
    expect(ran).toBe(1);
  });

  it('runs the policy gate in the call-path core too: a forbidden echo is refused, the other runs', async () => {
    const core = await pipelineCore();
    core.registry.add(runtimePlugin('runtime', [echoTool('echo'), echoTool('echo_two')]).plugin);
    await core.store.update(
      (d) => void (d.policy = { text: withForbid('echo', 'no-echo'), updated: '2026-01-01T00:00:00Z' }),
    );
    const ctx = ctxForRole('editor');
    expect(await core.pipeline.call('echo', {}, ctx)).toMatchObject({ kind: 'refused', code: 'policy_denied' });
    expect(await core.pipeline.call('echo_two', { text: 'yo' }, ctx)).toMatchObject({
      kind: 'result',
      output: { structured: { echoed: 'yo' } },
    });
  });
});
