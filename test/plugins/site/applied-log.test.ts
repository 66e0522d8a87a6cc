import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { APPLIED_KEEP } from '../../../main/plugins/site/applied-log.ts';
import { salvageSite } from '../../../main/plugins/site/site-salvage.ts';
import { ctxFor, openSite, plan, type SiteFixture } from './site-fixture.ts';

// Idempotent applies: the change and `staged id -> result` go into site.json in one write.

let site: SiteFixture;
afterEach(async () => site?.cleanup());

const admin = ctxFor('administrator');

async function createPage(title: string, stagedId: string, since = site.clock.t) {
  const p = await plan(site, 'pages_create', { title }, admin);
  return site.write('pages_create').apply(p.payload, admin, { id: stagedId, since });
}

describe('site applies keyed by the staged id', () => {
  it('records the result with the change in the same file write, and a second apply of the same id changes nothing', async () => {
    site = await openSite();
    const before = site.store.read().pages.length;
    const first = await createPage('Once only', 'stg_once1');
    const onDisk = JSON.parse(await readFile(site.file, 'utf8')) as {
      pages: Array<{ title: string }>;
      applied: Record<string, { structured: unknown }>;
    };
    expect(onDisk.pages.filter((p) => p.title === 'Once only')).toHaveLength(1);
    expect(onDisk.applied.stg_once1?.structured).toEqual(first.structured);

    const again = await createPage('Once only', 'stg_once1');
    expect(again).toEqual(first);
    expect(site.store.read().pages.length).toBe(before + 1);
  });

  it('answers applied (with the result), not_applied, and unknown for an intent older than a pruned marker', async () => {
    site = await openSite();
    const tool = site.write('pages_create');
    const since = site.clock.t;
    const out = await createPage('Answer me', 'stg_answer', since);
    expect(await tool.applied!({ id: 'stg_answer', since })).toEqual({ state: 'applied', output: out });
    expect(await tool.applied!({ id: 'stg_never', since })).toEqual({ state: 'not_applied' });

    for (let i = 0; i < APPLIED_KEEP; i++) {
      site.clock.advance(1);
      await createPage(`Filler ${i}`, `stg_fill${i}`);
    }
    const data = site.store.read();
    expect(Object.keys(data.applied)).toHaveLength(APPLIED_KEEP);
    expect(data.applied.stg_answer).toBeUndefined();
    // Pruned: an intent from before the horizon can no longer be answered either way...
    expect(await tool.applied!({ id: 'stg_answer', since })).toEqual({ state: 'unknown' });
    expect(await tool.applied!({ id: 'stg_never', since })).toEqual({ state: 'unknown' });
    // ...one after it still can.
    expect(await tool.applied!({ id: 'stg_never', since: site.clock.t + 1 })).toEqual({ state: 'not_applied' });
  });

  it('keeps a large result as its text only, so markers stay small', async () => {
    site = await openSite();
    const p = await plan(
      site,
      'pages_create',
      { title: 'Big one', content: `# Big\n\n${'word '.repeat(10_000)}` },
      admin,
    );
    const out = await site.write('pages_create').apply(p.payload, admin, { id: 'stg_big', since: site.clock.t });
    expect(JSON.stringify(out.structured).length).toBeGreaterThan(40_000);
    const marker = site.store.read().applied.stg_big!;
    expect(JSON.stringify(marker).length).toBeLessThan(2_000);
    expect(marker.text).toBe(out.text);
  });
});

describe('salvaging a damaged site.json', () => {
  it('keeps the valid pages, never reuses a kept id, never re-seeds, and stops vouching for lost markers', () => {
    const now = Date.parse('2026-05-01T00:00:00Z');
    const page = (id: number, over: Record<string, unknown> = {}) => ({
      id,
      slug: `p-${id}`,
      title: `Page ${id}`,
      content: '',
      excerpt: '',
      status: 'publish',
      seo_title: '',
      seo_description: '',
      focus_keyword: '',
      language: 'en',
      translations: {},
      author_id: 'usr_admin',
      created: '2026-01-01T00:00:00.000Z',
      modified: '2026-01-01T00:00:00.000Z',
      version: 1,
      ...over,
    });
    const raw = {
      schema_version: 1,
      site: { name: 'Kept', description: '', url: 'not a url', language: 'en', timezone: 'UTC' },
      pages: [page(1), page(2, { slug: 'Bad Slug!' }), page(7)],
      next_id: 3,
      seeded_at: null,
      applied: { stg_a: { at: 5, text: 'x', structured: {} }, stg_b: { at: 'broken' } },
      applied_horizon: null,
    };
    const out = salvageSite(raw, now);
    expect(out).not.toBeNull();
    expect(out!.data.pages.map((p) => p.id)).toEqual([1, 7]);
    expect(out!.data.next_id).toBe(8);
    expect(out!.data.seeded_at).not.toBeNull();
    expect(out!.data.site.name).toBe('Kept');
    expect(out!.data.applied_horizon).toBe(now);
    expect(out!.dropped).toEqual(expect.arrayContaining(['pages[1]', 'applied.stg_b']));
    expect(out!.dropped.some((d) => d.startsWith('site'))).toBe(true);
  });
});
