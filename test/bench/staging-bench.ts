/**
 * Staging cost vs the number of pending writes: staging one write, and
 * deciding one (discard), with 0 and with 500 writes already pending. Side by
 * side: the staged/ store (one file per write, in-memory index) and the way
 * staged writes were kept before, as transients inside options.json (cloned,
 * validated and rewritten whole on every update). Real files, real fsync.
 * Run: npx tsx test/bench/staging-bench.ts   (STAGING_BENCH_SAMPLES=40)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import type { StagedPayload } from '../../main/contract/staged.ts';
import { Auditor } from '../../main/core/calls/auditor.ts';
import { EventHub } from '../../main/core/events.ts';
import { OptionsData, emptyOptions } from '../../main/core/ports/options-data.ts';
import { Registry } from '../../main/core/calls/registry.ts';
import { Staging } from '../../main/core/staging/staging.ts';
import { StatsRecorder } from '../../main/core/calls/stats.ts';
import { defineTool, type WriteTool } from '../../main/core/calls/tool.ts';
import { Transients } from '../../main/core/ports/transients.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { JsonFileStore } from '../../main/store/json-file-store.ts';
import { StagedFiles } from '../../main/store/staged-files.ts';
import { ADMIN, WRITER, MemoryAudit, MemoryStore, NO_USAGE, ctxFor } from '../helpers/core.ts';
import { PRINCIPALS } from '../../main/contract/principal.ts';
import { SETTINGS_DEFAULTS } from '../../main/contract/settings.ts';
import { jsonSchemaCompiler } from '../../main/mcp/json-schema.ts';
import { printTable, summarize } from './stats.ts';

const SAMPLES = Number(process.env.STAGING_BENCH_SAMPLES ?? 40);
const PENDING = [0, 500];
// A page-sized write: a few KB of Markdown in the payload and the preview.
const TEXT = '## Section\n\nSome paragraph text for the page, long enough to be a realistic write. '.repeat(40);

const tool = defineTool({
  name: 'bench_write',
  title: 'Bench write',
  description: 'A write with a page-sized payload.',
  plugin: 'bench',
  feature: 'bench.write',
  capability: 'edit_pages',
  write: true,
  input: z.object({ n: z.number() }),
  async preview(input) {
    return {
      preview: { summary: `write ${input.n}`, kind: 'diff' as const, changes: [{ field: 'content', after: TEXT }] },
      payload: { n: input.n, content: TEXT },
      target: null,
      target_version: null,
    };
  },
  async apply() {
    return { structured: {} };
  },
}) as WriteTool;

async function stagedFilesWorld(dir: string) {
  const options = new MemoryStore({ ...emptyOptions(), users: [ADMIN, WRITER] }, OptionsData);
  const registry = new Registry(jsonSchemaCompiler);
  registry.add({ id: 'bench', title: 'Bench', kind: 'site', tools: () => [tool] });
  const audit = new MemoryAudit();
  const clock = { now: () => Date.now() };
  const store = await StagedFiles.open({ dir: join(dir, 'staged'), log: silentLogger });
  const limits = { pendingTotal: 10_000, pendingPerToken: 10_000 };
  return new Staging({
    store,
    users: (id) => options.read().users.find((u) => u.id === id),
    registry,
    auditor: new Auditor(audit, new StatsRecorder(options, clock), clock, () => 'local'),
    events: new EventHub(),
    clock,
    auditTrail: audit,
    settings: () => SETTINGS_DEFAULTS,
    usage: NO_USAGE,
    limits,
  });
}

/** The old layout: every staged write a transient in options.json. */
async function optionsWorld(dir: string) {
  const store = await JsonFileStore.open({
    file: join(dir, 'options.json'),
    schema: OptionsData,
    defaults: emptyOptions,
    log: silentLogger,
  });
  const transients = new Transients(store, { now: () => Date.now() });
  let n = 0;
  return {
    stage: async () => {
      const plan = await tool.preview({ n }, ctxFor(WRITER));
      const now = new Date().toISOString();
      const item: StagedPayload = {
        id: `stg_bench${n++}`,
        tool: tool.name,
        plugin: tool.plugin,
        payload: plan.payload,
        preview: plan.preview,
        user_id: WRITER.id,
        token_id: 'tok_a',
        token_label: 'a',
        client: 'bench',
        request_id: null,
        created: now,
        expires_at: now,
        payload_hash: 'h',
        target: null,
        target_version: null,
        status: 'pending',
        decided_at: null,
        decided_by: null,
        error_code: null,
        client_source: null,
      };
      await transients.set(`staged:${item.id}`, item, 15 * 60_000);
      return item.id;
    },
    decide: async (id: string) => {
      await store.update((d) => {
        const item = d.transients[`staged:${id}`]?.value as StagedPayload;
        delete d.transients[`staged:${id}`];
        d.staged_history.push({
          ...item,
          status: 'discarded',
          decided_at: new Date().toISOString(),
          decided_by: PRINCIPALS.cliDirect,
        });
        if (d.staged_history.length > 500) d.staged_history.shift();
      });
    },
  };
}

async function measure(kind: 'staged/ files' | 'options.json (before)', pending: number) {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  try {
    const stageTimes: number[] = [];
    const decideTimes: number[] = [];
    if (kind === 'staged/ files') {
      const staging = await stagedFilesWorld(dir);
      const ctx = ctxFor(WRITER);
      let n = 0;
      for (let i = 0; i < pending; i++) await staging.stage(tool, { n: n++ }, ctx);
      for (let i = 0; i < SAMPLES; i++) {
        let t = performance.now();
        const s = await staging.stage(tool, { n: n++ }, ctx);
        stageTimes.push(performance.now() - t);
        t = performance.now();
        await staging.discard(s.staged_id, { kind: 'person', principal: PRINCIPALS.cliDirect });
        decideTimes.push(performance.now() - t);
      }
    } else {
      const world = await optionsWorld(dir);
      for (let i = 0; i < pending; i++) await world.stage();
      for (let i = 0; i < SAMPLES; i++) {
        let t = performance.now();
        const id = await world.stage();
        stageTimes.push(performance.now() - t);
        t = performance.now();
        await world.decide(id);
        decideTimes.push(performance.now() - t);
      }
    }
    return { stage: summarize(stageTimes), decide: summarize(decideTimes) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const rows: Array<Array<string | number>> = [];
for (const kind of ['staged/ files', 'options.json (before)'] as const) {
  const [empty, full] = [await measure(kind, PENDING[0]!), await measure(kind, PENDING[1]!)];
  rows.push([`${kind}: stage one write`, empty.stage.p50, full.stage.p50, full.stage.p50 / empty.stage.p50]);
  rows.push([`${kind}: decide one write`, empty.decide.p50, full.decide.p50, full.decide.p50 / empty.decide.p50]);
}
printTable(
  `Staging with 0 vs 500 pending writes (p50 ms of ${SAMPLES}; ~4 KB payload + preview; fsync on)`,
  ['measure', '0 pending', '500 pending', 'ratio 500/0'],
  rows,
);
process.exit(0);
