/**
 * What asking the policy costs a tools/list (main/core/policy/policy-listing.ts): the server's list step
 * (the registry's visible set, then the answer kept per set, main/mcp/list-cache.ts) over 500 tools, without
 * the policy (as before), under the shipped default, and under a custom policy whose answer is kept for the
 * caller's set; "a new caller each list" is the first list of a token the policy never answered (every tool
 * asked, by Cedar's partial evaluation, since that policy reads an argument). Interleaved in one run so a
 * busy machine slows all alike.
 *
 * Target (docs/performance.md): the default and a kept custom answer add <= 0.05 ms p50 to a list.
 *
 *   npx tsx test/bench/tools-list-bench.ts     (BENCH_ROUNDS=7, BENCH_LISTS=300 by default)
 */
import { createCedarEngine } from '../../main/policy/cedar-engine.ts';
import { viewerOf } from '../../main/core/calls/registry.ts';
import type { CallContext } from '../../main/core/calls/tool.ts';
import { ToolListCache } from '../../main/mcp/list-cache.ts';
import { listedTool } from '../../main/mcp/server-factory.ts';
import { ctxForRole, echoTool, pipelineCore, runtimePlugin } from '../helpers/core.ts';
import { printTable, summarize } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const LISTS = Number(process.env.BENCH_LISTS ?? 300);
const TOOLS = 500;

const core = await pipelineCore();
core.registry.add(
  runtimePlugin(
    'bench',
    Array.from({ length: TOOLS }, (_, i) => echoTool(`tool_${i}`, 'bench')),
  ).plugin,
);
const defaultText = createCedarEngine({ activeText: () => null }).defaultText();
const CUSTOM = `${defaultText}
@id("no-tool-7")
forbid (principal, action, resource == Tool::"tool_7");
@id("tool-9-hi-only")
forbid (principal, action == Action::"call", resource == Tool::"tool_9")
unless { context.args.hasTag("text") && context.args.getTag("text") like "hi*" };`;

const lists = new ToolListCache(listedTool);
const settings = () => core.store.read().settings;
let callers = 0;
const newCaller = (): CallContext => {
  const ctx = ctxForRole('editor', {});
  return { ...ctx, token: { ...ctx.token!, id: `tok_${++callers}`, label: `caller ${callers}` } };
};
const same = ctxForRole('editor', {});
const setPolicy = (text: string | null) =>
  core.store.update((d) => void (d.policy = text === null ? null : { text, updated: '2026-01-01T00:00:00Z' }));

const variants: Record<string, { policy: string | null; asked: boolean; caller: () => CallContext }> = {
  'no policy asked (before)': { policy: null, asked: false, caller: () => same },
  'shipped default': { policy: null, asked: true, caller: () => same },
  'custom policy, kept answer': { policy: CUSTOM, asked: true, caller: () => same },
  'custom policy, a new caller each list': { policy: CUSTOM, asked: true, caller: newCaller },
};
const list = async (v: (typeof variants)[string]) => {
  const ctx = v.caller();
  const visible = core.registry.visible(viewerOf(ctx), settings());
  return lists.result(v.asked ? await core.listing.listed(ctx, visible) : visible);
};

// Warm: the engine loads, every path runs.
for (const v of Object.values(variants)) {
  await setPolicy(v.policy);
  for (let i = 0; i < 20; i++) await list(v);
}
const check = (await core.listing.listed(same, core.registry.visible(viewerOf(same), settings()))).length;
if (check !== TOOLS - 1) throw new Error(`the custom policy should hide one tool of ${TOOLS}, it hid ${TOOLS - check}`);

const samples: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, v] of Object.entries(variants)) {
    await setPolicy(v.policy);
    const into = (samples[name] ??= []);
    // the new-caller variant is slow per list: fewer of them
    const n = v.caller === newCaller ? Math.ceil(LISTS / 30) : LISTS;
    for (let i = 0; i < n; i++) {
      const t = process.hrtime.bigint();
      await list(v);
      into.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
}

const before = summarize(samples['no policy asked (before)']!).p50;
printTable(
  `tools/list of ${TOOLS} tools in process (visible set + policy + kept answer), p50/p99 of ${ROUNDS} rounds, interleaved (ms)`,
  ['what', 'p50 ms', 'p99 ms', 'added p50 ms', 'n'],
  Object.entries(samples).map(([name, s]) => {
    const r = summarize(s);
    return [name, r.p50, r.p99, name.endsWith('(before)') ? '' : (r.p50 - before).toFixed(3), r.n];
  }),
);
