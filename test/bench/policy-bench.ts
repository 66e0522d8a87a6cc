/**
 * What the tool-call policy adds to a tools/call: the same pipeline (real
 * registry, site plugin, auditor, staging, in memory) with the policy off
 * and on in several ways, interleaved in one run so a busy machine slows
 * all alike. Reads (`pages_list`) and writes (`pages_update`: `call`, then
 * staged). "before" rows send Cedar the whole request (`narrow: false`, as
 * the engine did before requests were narrowed to what the policy reads);
 * "a new minute each call" moves the clock a minute before every call, so
 * each is a request never seen before unless narrowing drops the time (the
 * first call of a new caller/tool/arguments combination costs the same);
 * "every call evaluated" keeps no decisions at all. "a policy reading the
 * title" adds one forbid on `context.args.getTag("title")` (docs/policy.md,
 * "Argument values"): the write's title is new at every call but passes the
 * policy's one test alike (not "*forbidden*"), so it reuses the decision kept
 * for its class (main/policy/tag-classes.ts); "every call evaluated" is what
 * the first value of a class never seen costs. The read has no title.
 *
 * Target (docs/performance.md): p50 added per tools/call <= 0.1 ms.
 *
 *   npx tsx test/bench/policy-bench.ts     (BENCH_ROUNDS=7, BENCH_CALLS=300 by default)
 */
import { execSync } from 'node:child_process';
import { Pipeline } from '../../main/core/calls/pipeline.ts';
import { PolicyGate } from '../../main/core/policy/policy-gate.ts';
import { LocalEntitlements } from '../../main/core/policy/local-entitlements.ts';
import { createCedarEngine } from '../../main/policy/cedar-engine.ts';
import { openCore } from '../helpers/core.ts';
import { printTable, summarize } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 300);

const core = await openCore();
const { registry, staging, auditor, settings, clock, profiles } = core;
const entitlements = new LocalEntitlements('free');
const usage = { record: () => {} };
const pipelineWith = (policy?: PolicyGate) =>
  new Pipeline({
    registry,
    staging,
    auditor,
    entitlements: () => entitlements,
    settings: () => settings.get(),
    clock,
    usage,
    ...(policy ? { policy } : {}),
  });
const engineFor = createCedarEngine({ activeText: () => null });
const TITLE_POLICY = `${engineFor.defaultText()}
@id("no-forbidden-titles")
forbid (principal, action, resource)
when { context.args.hasTag("title") && context.args.getTag("title") like "*forbidden*" };`;
const gate = (o: { cacheSize?: number; narrow?: boolean; text?: string } = {}) =>
  new PolicyGate({
    engine: createCedarEngine({ activeText: () => o.text ?? null, ...o }),
    settings: () => settings.get(),
    profileOf: (n) => profiles.get(n),
    clock,
  });
/** `tick`: the clock moves a minute before each call; `fresh`: each write's title is one never sent before. */
const variants: Record<string, { p: Pipeline; tick?: boolean; fresh?: boolean }> = {
  'policy off': { p: pipelineWith() },
  'on, same call repeated (before)': { p: pipelineWith(gate({ narrow: false })) },
  'on, same call repeated (narrowed)': { p: pipelineWith(gate()) },
  'on, a new minute each call (before)': { p: pipelineWith(gate({ narrow: false })), tick: true },
  'on, a new minute each call (narrowed)': { p: pipelineWith(gate()), tick: true },
  'on, every call evaluated (before)': { p: pipelineWith(gate({ cacheSize: 0, narrow: false })) },
  'on, every call evaluated (narrowed)': { p: pipelineWith(gate({ cacheSize: 0 })) },
  'on, a policy reading the title, same titles (narrowed)': { p: pipelineWith(gate({ text: TITLE_POLICY })) },
  'on, a policy reading the title, a new title each call (narrowed)': {
    p: pipelineWith(gate({ text: TITLE_POLICY })),
    fresh: true,
  },
  'on, a policy reading the title, a new title each call, every call evaluated': {
    p: pipelineWith(gate({ text: TITLE_POLICY, cacheSize: 0 })),
    fresh: true,
  },
};
const { record } = await core.tokenFor('bench', 'administrator');
const ctx = core.ctxOf(record.id);

const calls = {
  read: (p: Pipeline) => p.call('pages_list', {}, ctx),
  // A write stages (the staged store is in memory): the policy asks twice.
  write: (p: Pipeline, i: number) => p.call('pages_update', { id: 1, title: `Bench ${i}` }, ctx),
};
// Staged writes pile up against the per-token limit: dropped after each timed call.
const PERSON = {
  kind: 'person' as const,
  principal: { kind: 'person' as const, surface: 'cli' as const, via: 'data_dir' as const, session: null },
};
const drop = async () => {
  for (const s of staging.list({ status: 'pending' })) await staging.discard(s.id, PERSON);
};
// Warm: the engine loads and compiles, every path runs.
for (const { p } of Object.values(variants)) {
  for (let i = 0; i < 40; i++) {
    await calls.read(p);
    await calls.write(p, i);
    await drop();
  }
}

const samples: Record<string, number[]> = {};
let unique = 1_000_000;
for (let round = 0; round < ROUNDS; round++) {
  for (const [kind, call] of Object.entries(calls)) {
    for (const [name, { p, tick, fresh }] of Object.entries(variants)) {
      const into = (samples[`${kind}: ${name}`] ??= []);
      for (let i = 0; i < CALLS; i++) {
        if (tick) clock.advance(60_000);
        const n = fresh ? unique++ : i;
        const t = process.hrtime.bigint();
        await call(p, n);
        into.push(Number(process.hrtime.bigint() - t) / 1e6);
        if (kind === 'write') await drop();
      }
    }
  }
}

const rows: Array<Array<string | number>> = [];
for (const kind of Object.keys(calls)) {
  const off = summarize(samples[`${kind}: policy off`]!).p50;
  for (const name of Object.keys(variants)) {
    const s = summarize(samples[`${kind}: ${name}`]!);
    const added = s.p50 - off;
    rows.push([
      `${kind}: ${name}`,
      s.p50,
      s.p99,
      name === 'policy off' ? '' : added.toFixed(3),
      name === 'policy off' ? '' : added <= 0.1 ? 'met' : 'NOT met',
    ]);
  }
}
printTable(
  `tools/call in process, p50/p99 of ${ROUNDS} x ${CALLS} interleaved calls (ms); target: <= 0.1 ms added`,
  ['what', 'p50 ms', 'p99 ms', 'added p50 ms', '<= 0.1 ms'],
  rows,
);
console.log(`\nload: ${execSync('uptime').toString().trim()}`);
process.exit(0);
