import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RESOURCE_READ, UNKNOWN_TOOL } from '../../../main/contract/audit.ts';
import { PRINCIPALS } from '../../../main/contract/principal.ts';
import { GatehouseError } from '../../../main/core/errors.ts';
import { defineTool, type Tool } from '../../../main/core/calls/tool.ts';
import { USAGE_EVENTS } from '../../../main/core/calls/usage.ts';
import { T0, ctxForRole as ctxFor, echoTool, pipelineCore as openCore, runtimePlugin } from '../../helpers/core.ts';

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'no error';
  } catch (e) {
    return e instanceof GatehouseError ? e.code : `not a GatehouseError: ${String(e)}`;
  }
}

const writeTool = defineTool({
  name: 'note_write',
  title: 'Write a note',
  description: 'd',
  plugin: 'runtime',
  capability: 'edit_pages',
  feature: 'site.pages.write',
  write: true,
  input: z.object({ text: z.string() }),
  preview: async (input) => ({
    preview: { summary: `write '${input.text}'`, kind: 'arguments', changes: [], arguments: input },
    payload: { text: input.text },
    target: null,
    target_version: null,
  }),
  apply: async (payload) => ({ structured: { written: payload.text } }),
});

async function coreWith(...tools: Tool[]) {
  const core = await openCore();
  core.registry.add(runtimePlugin('runtime', tools).plugin);
  return core;
}

describe('pipeline: tools/call', () => {
  it('runs a read tool: one ok audit entry and one usage event in the spec shape with a UUIDv7 id', async () => {
    const core = await coreWith(echoTool('echo'));
    const out = await core.pipeline.call('echo', { text: 'yo' }, ctxFor('subscriber', {}));
    expect(out).toEqual({ kind: 'result', output: { structured: { echoed: 'yo' } } });
    expect(core.audit).toHaveLength(1);
    expect(core.lastAudit()).toMatchObject({
      tool: 'echo',
      result: 'ok',
      source_plugin: 'runtime',
      feature_key: 'mcp.core',
      token_id: 'tok_subscriber',
      user_id: 'usr_subscriber',
    });
    expect(core.usageEvents).toEqual([
      {
        event_id: expect.stringMatching(UUIDV7),
        event: USAGE_EVENTS.toolCalled,
        site_id: 'site_test',
        product: 'mcp',
        feature: 'mcp.core',
        model: '',
        units: 1,
        tokens_input: 0,
        tokens_output: 0,
        timestamp: new Date(T0).toISOString(),
      },
    ]);
  });

  it('refuses bad arguments with invalid_params naming the field, audited, and counts no usage', async () => {
    const core = await coreWith(echoTool('echo'));
    let err: GatehouseError | null = null;
    await core.pipeline.call('echo', { text: 'x'.repeat(51) }, ctxFor('administrator')).catch((e) => (err = e));
    expect(err!.code).toBe('invalid_params');
    expect(err!.message).toMatch(/^invalid arguments for echo: text: /);
    expect(core.lastAudit()).toMatchObject({ tool: 'echo', result: 'error', error_code: 'invalid_params' });
    expect(core.usageEvents).toEqual([]);
  });

  it('answers an unknown or hidden tool alike, audits a made-up name bounded, and counts it under one bucket', async () => {
    const core = await coreWith(echoTool('echo'));
    const long = `made_up_${'x'.repeat(5_000)}`;
    expect(await codeOf(core.pipeline.call(long, {}, ctxFor('administrator')))).toBe('unknown_tool');
    expect(await codeOf(core.pipeline.call('echo', {}, ctxFor('administrator', { tools: ['other'] })))).toBe(
      'unknown_tool',
    );
    expect(core.audit.map((e) => [e.result, e.error_code])).toEqual([
      ['denied', 'unknown_tool'],
      ['denied', 'unknown_tool'],
    ]);
    expect(core.audit[0]!.tool.length).toBeLessThanOrEqual(128);
    await core.stats.flush();
    expect(Object.keys(core.store.read().stats.tools).sort()).toEqual([UNKNOWN_TOOL, 'echo'].sort());
  });

  it('a tool named __proto__ (or any object member) is just an unknown tool: nothing else breaks', async () => {
    const core = await coreWith(echoTool('echo'));
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '__defineGetter__']) {
      expect(await codeOf(core.pipeline.call(name, {}, ctxFor('subscriber')))).toBe('unknown_tool');
    }
    await core.stats.flush();
    expect(({} as Record<string, unknown>).denied).toBeUndefined();
    expect(Object.getPrototypeOf(core.store.read().stats.tools)).toBe(Object.prototype);
    expect(core.stats.snapshot().tools[UNKNOWN_TOOL]).toEqual({ denied: 5 });
    expect((await core.pipeline.call('echo', {}, ctxFor('subscriber'))).kind).toBe('result');
  });

  it('refuses a feature outside the plan with entitlement_required, audited as denied', async () => {
    const core = await coreWith(echoTool('pro_echo', 'runtime', { feature: 'verto.translate' }));
    const out = await core.pipeline.call('pro_echo', {}, ctxFor('administrator'));
    expect(out).toMatchObject({ kind: 'refused', code: 'entitlement_required', details: { required_plan: 'pro' } });
    expect(core.lastAudit()).toMatchObject({ result: 'denied', error_code: 'entitlement_required' });
  });

  it('stages a write (usage: one tool call) and a confirm emits mcp.write.confirmed', async () => {
    const core = await coreWith(writeTool);
    const out = await core.pipeline.call('note_write', { text: 'hello' }, ctxFor('editor'));
    expect(out.kind).toBe('result');
    const staged = (out as unknown as { output: { structured: { staged_id: string } } }).output.structured;
    expect(core.lastAudit()).toMatchObject({ tool: 'note_write', result: 'staged' });
    expect(core.usageEvents.map((e) => e.event)).toEqual([USAGE_EVENTS.toolCalled]);
    const done = await core.staging.confirm(staged.staged_id, { kind: 'person', principal: PRINCIPALS.tray });
    expect(done.result).toEqual({ written: 'hello' });
    expect(core.usageEvents.map((e) => [e.event, e.feature, e.units])).toEqual([
      [USAGE_EVENTS.toolCalled, 'site.pages.write', 1],
      [USAGE_EVENTS.writeConfirmed, 'site.pages.write', 0],
    ]);
    // one write staged and confirmed is one mcp_action (units of mcp.* events), not two
    expect(core.usageEvents.reduce((n, e) => n + e.units, 0)).toBe(1);
    expect(core.usageEvents[1]!.event_id).not.toBe(core.usageEvents[0]!.event_id);
  });

  it('tells the agent how a staged write gets decided, following the approval mode', async () => {
    const core = await coreWith(writeTool);
    const textOf = async () =>
      (
        (await core.pipeline.call('note_write', { text: 'x' }, ctxFor('editor'))) as unknown as {
          output: { text: string };
        }
      ).output.text;
    expect(await textOf()).toMatch(/A person approves or discards it/);
    await core.setSettings({ approval_mode: 'agent' });
    expect(await textOf()).toMatch(/confirm it with staged_writes_confirm/);
  });

  it('stops a call at its deadline even when the tool ignores the signal, and aborts that signal', async () => {
    let seen: AbortSignal | undefined;
    const stuck = defineTool({
      ...echoTool('stuck'),
      timeout_ms: 30,
      run: (_input, ctx) => {
        seen = ctx.signal;
        return new Promise(() => {});
      },
    } as Tool);
    const core = await coreWith(stuck);
    let err: GatehouseError | null = null;
    await core.pipeline.call('stuck', {}, ctxFor('administrator')).catch((e) => (err = e));
    expect(err!.code).toBe('timeout');
    expect(err!.message).toMatch(/stuck took longer than 30 ms/);
    expect(seen?.aborted).toBe(true);
    expect((seen?.reason as GatehouseError).code).toBe('timeout');
    expect(core.lastAudit()).toMatchObject({ tool: 'stuck', result: 'error', error_code: 'timeout' });
  });

  it('hands the client cancelling on to the tool, and records the call as cancelled', async () => {
    let seen: AbortSignal | undefined;
    let running: () => void = () => {};
    const started = new Promise<void>((r) => (running = r));
    const slow = defineTool({
      ...echoTool('slow'),
      run: (_input, ctx) => {
        seen = ctx.signal;
        running();
        return new Promise((_, reject) => ctx.signal!.addEventListener('abort', () => reject(ctx.signal!.reason)));
      },
    } as Tool);
    const core = await coreWith(slow);
    const client = new AbortController();
    const call = core.pipeline.call('slow', {}, ctxFor('administrator', null, client.signal));
    await started;
    client.abort();
    expect(await codeOf(call)).toBe('cancelled');
    expect(seen?.aborted).toBe(true);
    expect(core.lastAudit()).toMatchObject({ result: 'error', error_code: 'cancelled' });
  });

  it('runs a write preview under the deadline too: nothing is staged when it runs out', async () => {
    const slowWrite = { ...writeTool, timeout_ms: 20, preview: () => new Promise(() => {}) } as Tool;
    const core = await coreWith(slowWrite);
    expect(await codeOf(core.pipeline.call('note_write', { text: 'x' }, ctxFor('editor')))).toBe('timeout');
    expect(core.staging.pendingCount()).toBe(0);
    expect(core.lastAudit()).toMatchObject({ tool: 'note_write', result: 'error', error_code: 'timeout' });
  });

  it('checks a result against the output schema', async () => {
    const liar = defineTool({ ...echoTool('liar'), output: z.object({ count: z.number() }) } as Tool);
    const core = await coreWith(liar);
    let err: GatehouseError | null = null;
    await core.pipeline.call('liar', {}, ctxFor('administrator')).catch((e) => (err = e));
    expect(err!.code).toBe('upstream_error'); // the test plugin is of kind "upstream"
    expect(err!.message).toMatch(/does not match its output schema: count: /);
  });
});

describe('pipeline: resources/read', () => {
  const withResource = async () => {
    const core = await openCore();
    const plugin = runtimePlugin('runtime', [echoTool('reader')]).plugin;
    plugin.resources = () => [
      {
        uri: 'test://data',
        name: 'data',
        mimeType: 'text/plain',
        capability: 'read',
        tool: 'reader',
        read: async (ctx) => `for ${ctx.user.login}`,
      },
    ];
    core.registry.add(plugin);
    return core;
  };

  it('reads a visible resource, audited with its URI', async () => {
    const core = await withResource();
    const { text } = await core.pipeline.readResource('test://data', ctxFor('subscriber', {}));
    expect(text).toBe('for subscriber');
    expect(core.lastAudit()).toMatchObject({
      tool: RESOURCE_READ,
      result: 'ok',
      target: 'test://data',
      source_plugin: 'runtime',
      token_id: 'tok_subscriber',
    });
  });

  it('answers a hidden resource like a missing one (disabled tool, narrowed token), and audits the refusal', async () => {
    const core = await withResource();
    expect(await codeOf(core.pipeline.readResource('test://data', ctxFor('administrator', { tools: ['other'] })))).toBe(
      'not_found',
    );
    await core.setSettings({ disabled_tools: ['reader'] });
    expect(await codeOf(core.pipeline.readResource('test://data', ctxFor('administrator')))).toBe('not_found');
    expect(
      await codeOf(core.pipeline.readResource(`test://${'\u0000\ud800'.repeat(400)}`, ctxFor('administrator'))),
    ).toBe('not_found');
    expect(core.audit.map((e) => [e.tool, e.result, e.error_code])).toEqual([
      [RESOURCE_READ, 'denied', 'not_found'],
      [RESOURCE_READ, 'denied', 'not_found'],
      [RESOURCE_READ, 'denied', 'not_found'],
    ]);
    const target = core.lastAudit().target!;
    expect(target.length).toBeLessThanOrEqual(300);
    expect([...target].some((ch) => ch.charCodeAt(0) < 0x20)).toBe(false);
    expect(target).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/); // no lone surrogate
  });
});

describe('stats: bounded, whatever the clients send', () => {
  it('keeps what waits in memory aggregated while the store refuses writes, and loses nothing once it takes them', async () => {
    const core = await coreWith(echoTool('echo'));
    core.store.failWrites = true;
    for (let i = 0; i < 2_000; i++)
      await codeOf(core.pipeline.call(`invented_${i}_${'y'.repeat(500)}`, {}, ctxFor('subscriber')));
    await expect(core.stats.flush()).rejects.toThrow(/ENOSPC/);
    await expect(core.stats.flush()).rejects.toThrow(/ENOSPC/);
    // one bucket for every invented name: a few bytes of counters, not 2,000 names
    expect(JSON.stringify(core.stats.snapshot()).length).toBeLessThan(400);
    core.store.failWrites = false;
    await core.stats.flush();
    expect(core.store.read().stats.tools).toEqual({ [UNKNOWN_TOOL]: { denied: 2_000 } });
    expect(Object.values(core.store.read().stats.hourly)).toEqual([{ denied: 2_000 }]);
  });

  it('keeps usage totals per event and feature for the Usage screen', async () => {
    const core = await coreWith(echoTool('echo'));
    await core.pipeline.call('echo', {}, ctxFor('subscriber'));
    core.usage.record({
      event: USAGE_EVENTS.aiCompleted,
      product: 'verto',
      feature: 'verto.translate',
      model: 'm',
      tokens_input: 120,
      tokens_output: 80,
    });
    core.usage.record({
      event: USAGE_EVENTS.aiCompleted,
      product: 'verto',
      feature: 'verto.translate',
      model: 'm',
      tokens_input: 30,
      tokens_output: 20,
    });
    await core.stats.flush();
    expect(core.store.read().stats.usage).toEqual({
      [USAGE_EVENTS.toolCalled]: { 'mcp.core': { events: 1, units: 1, tokens_input: 0, tokens_output: 0 } },
      [USAGE_EVENTS.aiCompleted]: { 'verto.translate': { events: 2, units: 2, tokens_input: 150, tokens_output: 100 } },
    });
  });
});
