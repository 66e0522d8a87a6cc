/**
 * What the tool-call policy adds to a tools/call: the same pipeline (real
 * registry, site plugin, auditor, staging, in memory) with the policy off,
 * on (the default policy, decisions reused per exact request), and on with
 * that memory off (every call a full Cedar evaluation), interleaved in one
 * run so a busy machine slows all alike; and on with the clock moved a
 * minute before each call, so every call is a request never seen before
 * (the time, to the minute, is part of it): the cost of the first decision
 * for a new caller, tool, argument names or minute. Reads (`pages_list`) and
 * writes (`pages_update`: `call` and `run_without_approval`, then staged).
 *
 * Target (issue 20): p50 added per tools/call <= 0.1 ms.
 *
 *   npx tsx test/bench/policy-bench.ts     (BENCH_ROUNDS=7, BENCH_CALLS=300 by default)
 */
import { execSync } from 'node:child_process';
import { Pipeline } from '../../main/core/pipeline.ts';
import { PolicyGate } from '../../main/core/policy-gate.ts';
import { LocalEntitlements } from '../../main/core/local-entitlements.ts';
import { createCedarEngine } from '../../main/policy/cedar-engine.ts';
import { openCore } from '../helpers/core.ts';
import { printTable, summarize } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 300);

const core = await openCore();
const { registry, staging, auditor, settings, clock, profiles } = core;
const entitlements = new LocalEntitlements('free');
const usage = { record: () => {} };
const pipelineWith = (policy?: PolicyGate) => new Pipeline({ registry, staging, auditor, entitlements: () => entitlements, settings: () => settings.get(), clock, usage, ...(policy ? { policy } : {}) });
const gate = (cacheSize?: number) => new PolicyGate({ engine: createCedarEngine({ activeText: () => null, ...(cacheSize !== undefined ? { cacheSize } : {}) }), settings: () => settings.get(), profileOf: (n) => profiles.get(n), clock });
const variants = { 'policy off': pipelineWith(), 'policy on (default, decisions reused)': pipelineWith(gate()), 'policy on (a new minute each call)': pipelineWith(gate()), 'policy on (every call evaluated)': pipelineWith(gate(0)) };
const TICKS = 'policy on (a new minute each call)';
const { record } = await core.tokenFor('bench', 'administrator');
const ctx = core.ctxOf(record.id);

const calls = {
  read: (p: Pipeline) => p.call('pages_list', {}, ctx),
  // A write stages (the staged store is in memory): the policy asks twice.
  write: (p: Pipeline, i: number) => p.call('pages_update', { id: 1, title: `Bench ${i}` }, ctx),
};
// Staged writes pile up against the per-token limit: dropped after each timed call.
const PERSON = { kind: 'person' as const, principal: { kind: 'person' as const, surface: 'cli' as const, via: 'data_dir' as const, session: null } };
const drop = async () => {
  for (const s of staging.list({ status: 'pending' })) await staging.discard(s.id, PERSON);
};
// Warm: the engine loads and compiles, every path runs.
for (const p of Object.values(variants)) {
  for (let i = 0; i < 40; i++) {
    await calls.read(p);
    await calls.write(p, i);
    await drop();
  }
}

const samples: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [kind, call] of Object.entries(calls)) {
    for (const [name, p] of Object.entries(variants)) {
      const into = (samples[`${kind}: ${name}`] ??= []);
      for (let i = 0; i < CALLS; i++) {
        if (name === TICKS) clock.advance(60_000);
        const t = process.hrtime.bigint();
        await call(p, i);
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
    rows.push([`${kind}: ${name}`, s.p50, s.p99, name === 'policy off' ? '' : added.toFixed(3), name === 'policy off' ? '' : added <= 0.1 ? 'met' : 'NOT met']);
  }
}
printTable(`tools/call in process, p50/p99 of ${ROUNDS} x ${CALLS} interleaved calls (ms); target: <= 0.1 ms added`, ['what', 'p50 ms', 'p99 ms', 'added p50 ms', '<= 0.1 ms'], rows);
console.log(`\nload: ${execSync('uptime').toString().trim()}`);
process.exit(0);
