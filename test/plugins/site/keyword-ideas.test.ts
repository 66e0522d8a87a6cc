import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keywordIdeas, type KeywordIdea } from '../../../main/plugins/site/keywords.ts';
import { STOP_WORDS } from '../../../main/plugins/site/stop-words.ts';
import { fold } from '../../../main/plugins/site/text.ts';
import { ctxFor, openSite, pageOf, run, type SiteFixture } from './site-fixture.ts';

let site: SiteFixture;
beforeEach(async () => {
  site = await openSite();
});
afterEach(async () => site.cleanup());

const ideasOf = (out: Record<string, unknown>) => out.ideas as KeywordIdea[];

describe('seo_keyword_ideas on the seed site', () => {
  it('ranks phrases from published English pages, best first, with the pages that use them', async () => {
    const out = await run(site, 'seo_keyword_ideas', {});
    expect(out).toMatchObject({ language: 'en', pages_analyzed: 6, stop_words: true });
    const ideas = ideasOf(out);
    expect(ideas).toHaveLength(25);
    expect(ideas[0]!.phrase).toBe('coffee');
    expect(ideas.map((i) => i.score)).toEqual([...ideas.map((i) => i.score)].sort((a, b) => b - a));
    const phrases = ideas.map((i) => i.phrase);
    expect(phrases).toEqual(
      expect.arrayContaining(['wholesale coffee', 'roast', 'dark roast', 'harbour espresso blend']),
    );
    expect(ideas.some((i) => i.words === 3) && ideas.some((i) => i.words === 2)).toBe(true);
    const pageIds = new Set(ideas.flatMap((i) => i.pages.map((p) => p.id)));
    expect(pageIds.has(7)).toBe(false); // the draft
    expect(pageIds.has(8)).toBe(false); // the German page
    const blend = ideas.find((i) => i.phrase === 'harbour espresso blend')!;
    expect(blend.pages.map((p) => p.title)).toEqual(
      expect.arrayContaining(['Our coffees', 'Wholesale coffee for cafés and offices']),
    );
    expect(blend.occurrences).toBe(blend.pages.reduce((n, p) => n + p.occurrences, 0));
  });

  it('never starts or ends a phrase with a stop word', async () => {
    const ideas = ideasOf(await run(site, 'seo_keyword_ideas', { limit: 100 }));
    const stop = STOP_WORDS.en!;
    for (const i of ideas) {
      const ws = i.phrase.split(' ');
      expect(stop.has(fold(ws[0]!)), i.phrase).toBe(false);
      expect(stop.has(fold(ws[ws.length - 1]!)), i.phrase).toBe(false);
    }
  });

  it('marks phrases already used as a focus keyword, or leaves them out', async () => {
    const ideas = ideasOf(await run(site, 'seo_keyword_ideas', { limit: 100 }));
    expect(ideas.find((i) => i.phrase === 'wholesale coffee')?.in_use_by).toEqual([
      { id: 4, title: 'Wholesale coffee for cafés and offices' },
    ]);
    expect(ideas.find((i) => i.phrase === 'coffee')?.in_use_by).toEqual([]);
    const fresh = ideasOf(await run(site, 'seo_keyword_ideas', { limit: 100, exclude_in_use: true }));
    expect(fresh.map((i) => i.phrase)).not.toContain('wholesale coffee');
    expect(fresh.every((i) => i.in_use_by.length === 0)).toBe(true);
  });

  it('filters by a contained word and by language', async () => {
    const roast = ideasOf(await run(site, 'seo_keyword_ideas', { contains: 'Roast' }));
    expect(roast.length).toBeGreaterThan(1);
    expect(roast.every((i) => i.phrase.split(' ').includes('roast'))).toBe(true);
    const de = await run(site, 'seo_keyword_ideas', { language: 'de', limit: 5 });
    expect(de).toMatchObject({ language: 'de', pages_analyzed: 1, stop_words: true });
    expect(ideasOf(de)[0]!.phrase).toBe('kaffee');
    expect(ideasOf(de).every((i) => i.pages.every((p) => p.id === 8))).toBe(true);
    expect(await run(site, 'seo_keyword_ideas', { language: 'fr' })).toEqual({
      language: 'fr',
      pages_analyzed: 0,
      stop_words: false,
      ideas: [],
    });
  });

  it('picks up what a newly published page is about', async () => {
    const before = ideasOf(await run(site, 'seo_keyword_ideas', { limit: 100 }));
    expect(before.map((i) => i.phrase)).not.toContain('cold brew');
    await site.store.update((d) => {
      d.pages.push(
        pageOf({
          id: d.next_id++,
          slug: 'cold-brew',
          title: 'Cold brew',
          content: '# Cold brew\n\nCold brew is slow. Make cold brew overnight. Cold brew keeps a week.',
        }),
      );
    });
    const after = ideasOf(await run(site, 'seo_keyword_ideas', { limit: 100 }));
    expect(after.find((i) => i.phrase === 'cold brew')?.pages[0]?.title).toBe('Cold brew');
  });

  it('does not reveal draft titles to readers through in_use_by', async () => {
    await site.store.update((d) => {
      const draft = d.pages.find((p) => p.id === 7)!;
      draft.focus_keyword = 'coffee';
    });
    const admin = ideasOf(await run(site, 'seo_keyword_ideas', {}));
    expect(admin.find((i) => i.phrase === 'coffee')?.in_use_by.map((p) => p.id)).toEqual([7]);
    const reader = ideasOf(await run(site, 'seo_keyword_ideas', {}, ctxFor('subscriber')));
    expect(reader.find((i) => i.phrase === 'coffee')?.in_use_by).toEqual([]);
  });
});

describe('keywordIdeas', () => {
  it('drops a phrase that only ever appears inside a longer one, and ranks deterministically', () => {
    const pages = [
      pageOf({ id: 1, title: 'A', content: 'Harbour blend tonight. Harbour blend tomorrow. Espresso machine.' }),
      pageOf({ id: 2, title: 'B', content: 'Espresso machine repair. Espresso beans. Espresso machine.' }),
    ];
    const { ideas } = keywordIdeas(pages, 'en', { limit: 50, allPages: pages });
    const phrases = ideas.map((i) => i.phrase);
    expect(phrases).toContain('harbour blend');
    expect(phrases).not.toContain('harbour'); // only ever in "harbour blend"
    expect(phrases).not.toContain('blend');
    expect(phrases).toContain('espresso'); // also stands alone in "espresso beans"
    expect(phrases).toContain('espresso machine');
    expect(keywordIdeas(pages, 'en', { limit: 50, allPages: pages }).ideas).toEqual(ideas);
  });

  it('weighs a phrase found on fewer pages higher (IDF)', () => {
    const pages = [1, 2, 3, 4].map((id) =>
      pageOf({
        id,
        title: `P${id}`,
        content: `Coffee every day. Coffee again.${id === 1 ? ' Grinder tips. Grinder care.' : ''}`,
      }),
    );
    const { ideas } = keywordIdeas(pages, 'en', { limit: 10, allPages: pages });
    const score = (p: string) => ideas.find((i) => i.phrase === p)!.score;
    // page 1 uses "grinder" as often as "coffee", but only page 1 uses it
    expect(score('grinder')).toBeGreaterThan(score('coffee') / 4);
  });
});
