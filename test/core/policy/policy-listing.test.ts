import { describe, expect, it } from 'vitest';
import { createCedarEngine } from '../../../main/policy/cedar-engine.ts';
import { viewerOf } from '../../../main/core/calls/registry.ts';
import { ctxForRole, echoTool, pipelineCore, runtimePlugin } from '../../helpers/core.ts';

/** tools/list asks the same `call` decision as the pipeline: what a custom policy forbids whatever the call is not listed. */
const defaultPolicy = createCedarEngine({ activeText: () => null }).defaultText();

async function coreWithPolicy(extra: string | null) {
  const core = await pipelineCore();
  core.registry.add(runtimePlugin('runtime', [echoTool('echo'), echoTool('echo_two'), echoTool('echo_path')]).plugin);
  if (extra !== null)
    await core.store.update(
      (d) => void (d.policy = { text: `${defaultPolicy}\n${extra}`, updated: '2026-01-01T00:00:00Z' }),
    );
  const listed = async (ctx = ctxForRole('editor')) =>
    core.listing.listed(ctx, core.registry.visible(viewerOf(ctx), core.store.read().settings));
  return { core, listed };
}
const names = (entries: readonly { tool: { name: string } }[]) => entries.map((e) => e.tool.name);

describe('tools/list by the policy in force', () => {
  it('under the shipped default, lists what the registry shows, as it is (nothing asked)', async () => {
    const { core, listed } = await coreWithPolicy(null);
    const ctx = ctxForRole('editor');
    const visible = core.registry.visible(viewerOf(ctx), core.store.read().settings);
    expect(await core.listing.listed(ctx, visible)).toBe(visible);
    expect(names(await listed())).toEqual(['echo', 'echo_two', 'echo_path']);
  });

  it('leaves out a tool a custom policy forbids whatever the call; the call is refused the same way', async () => {
    const { core, listed } = await coreWithPolicy(
      '@id("no-echo")\nforbid (principal, action, resource == Tool::"echo");',
    );
    expect(names(await listed())).toEqual(['echo_two', 'echo_path']);
    expect(await core.pipeline.call('echo', {}, ctxForRole('editor'))).toMatchObject({
      kind: 'refused',
      code: 'policy_denied',
    });
  });

  it('keeps a tool the policy forbids only for some arguments, and refuses those calls', async () => {
    const { core, listed } = await coreWithPolicy(
      '@id("echo-path-hi-only")\nforbid (principal, action == Action::"call", resource == Tool::"echo_path")\nunless { context.args.hasTag("text") && context.args.getTag("text") like "hi*" };',
    );
    expect(names(await listed())).toEqual(['echo', 'echo_two', 'echo_path']);
    const ctx = ctxForRole('editor');
    expect(await core.pipeline.call('echo_path', { text: 'nope' }, ctx)).toMatchObject({ code: 'policy_denied' });
    expect(await core.pipeline.call('echo_path', { text: 'hi there' }, ctx)).toMatchObject({ kind: 'result' });
  });

  it('asks per caller: a rule on the token hides the tool from that token only', async () => {
    const { listed } = await coreWithPolicy(
      '@id("no-echo-for-ci")\nforbid (principal, action, resource == Tool::"echo_two") when { principal.token.label == "ci" };',
    );
    const ci = { ...ctxForRole('editor', {}), token: { ...ctxForRole('editor', {}).token!, label: 'ci' } };
    expect(names(await listed(ci))).toEqual(['echo', 'echo_path']);
    expect(names(await listed(ctxForRole('editor', {})))).toEqual(['echo', 'echo_two', 'echo_path']);
  });

  it('keeps each visible set once, and answers again when the policy changes', async () => {
    const { core, listed } = await coreWithPolicy(
      '@id("no-echo")\nforbid (principal, action, resource == Tool::"echo");',
    );
    const first = await listed();
    expect(await listed()).toBe(first);
    await core.store.update(
      (d) =>
        void (d.policy = {
          text: `${defaultPolicy}\n@id("no-echo-two")\nforbid (principal, action, resource == Tool::"echo_two");`,
          updated: '2026-01-02T00:00:00Z',
        }),
    );
    expect(names(await listed())).toEqual(['echo', 'echo_path']);
    await core.store.update((d) => void (d.policy = null));
    expect(names(await listed())).toEqual(['echo', 'echo_two', 'echo_path']);
  });
});
