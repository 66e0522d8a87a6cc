import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatehouseError } from '../../../main/core/errors.ts';
import type { Page } from '../../../main/plugins/site/site-data.ts';
import { ctxFor, openSite, pageOf, plan, run, type SiteFixture } from './site-fixture.ts';

let site: SiteFixture;
afterEach(async () => site?.cleanup());

const code = (e: unknown) => (e as GatehouseError).code;

/** 25 extra pages with predictable titles, languages, authors and modified times. */
async function addPages(s: SiteFixture): Promise<void> {
  await s.store.update((d) => {
    for (let i = 1; i <= 25; i++) {
      const id = d.next_id++;
      d.pages.push(
        pageOf({
          id,
          slug: `note-${i}`,
          title: `Note ${String(i).padStart(2, '0')}`,
          content: `# Note ${i}\n\nText ${i}.`,
          status: i % 5 === 0 ? 'draft' : 'publish',
          language: i % 3 === 0 ? 'de' : 'en',
          author_id: i % 2 ? 'usr_author' : 'usr_admin',
          modified: new Date(Date.parse('2026-01-01T00:00:00Z') + i * 3600_000).toISOString(),
        }),
      );
    }
  });
}

describe('pages_list', () => {
  beforeEach(async () => {
    site = await openSite();
  });

  it('lists newest first by default, 20 per page, with totals', async () => {
    const out = await run(site, 'pages_list', {});
    expect(out).toMatchObject({ total: 8, page: 1, per_page: 20, total_pages: 1 });
    const modified = out.pages.map((p: Page) => p.modified);
    expect(modified).toEqual([...modified].sort().reverse());
    expect(out.pages[0]).not.toHaveProperty('content');
    expect(out.pages[0].url).toMatch(/^https:\/\/northbank-coffee\.example\//);
  });

  it('paginates without overlap or gaps', async () => {
    await addPages(site);
    const seen: number[] = [];
    for (let page = 1; page <= 4; page++) {
      const out = await run(site, 'pages_list', { per_page: 10, page, order_by: 'id' });
      expect(out.total).toBe(33);
      expect(out.total_pages).toBe(4);
      seen.push(...out.pages.map((p: Page) => p.id));
    }
    expect(seen).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
    const beyond = await run(site, 'pages_list', { per_page: 10, page: 5 });
    expect(beyond.pages).toEqual([]);
    expect(beyond.total).toBe(33);
  });

  it('filters by status, language, author and modified time, and combines them', async () => {
    await addPages(site);
    const drafts = await run(site, 'pages_list', { status: 'draft', per_page: 100 });
    expect(drafts.pages.every((p: Page) => p.status === 'draft')).toBe(true);
    expect(drafts.total).toBe(1 + 5);
    const de = await run(site, 'pages_list', { language: 'de', per_page: 100 });
    expect(de.total).toBe(1 + 8);
    const byAuthor = await run(site, 'pages_list', { author_id: 'usr_author', per_page: 100 });
    expect(byAuthor.total).toBe(13);
    const recent = await run(site, 'pages_list', {
      modified_after: '2026-01-01T20:00:00Z',
      order_by: 'id',
      per_page: 100,
    });
    expect(recent.pages.map((p: Page) => p.slug)).not.toContain('note-20');
    expect(recent.pages.map((p: Page) => p.slug)).toContain('note-21');
    const combined = await run(site, 'pages_list', {
      status: 'publish',
      language: 'de',
      author_id: 'usr_author',
      per_page: 100,
    });
    expect(combined.pages.map((p: Page) => p.slug).sort()).toEqual(['note-21', 'note-3', 'note-9']);
  });

  it('sorts by title in either direction', async () => {
    const asc = await run(site, 'pages_list', { order_by: 'title' });
    const titles = asc.pages.map((p: Page) => p.title);
    expect(titles).toEqual([...titles].sort((a, b) => a.localeCompare(b)));
    const desc = await run(site, 'pages_list', { order_by: 'title', order: 'desc' });
    expect(desc.pages.map((p: Page) => p.title)).toEqual([...titles].reverse());
  });

  it("hides drafts from users who cannot edit pages, and others' drafts from users who may not edit them", async () => {
    const reader = await run(site, 'pages_list', { per_page: 100 }, ctxFor('subscriber'));
    expect(reader.total).toBe(7);
    const askDrafts = await run(site, 'pages_list', { status: 'draft' }, ctxFor('subscriber'));
    expect(askDrafts.total).toBe(0);
    // The seeded draft is the administrator's: a contributor does not see it, an editor does (edit_others_pages).
    const contributor = await run(site, 'pages_list', { status: 'draft' }, ctxFor('contributor'));
    expect(contributor.total).toBe(0);
    expect((await run(site, 'pages_list', { status: 'draft' }, ctxFor('editor'))).total).toBe(1);
    // Their own drafts they do see.
    await site.store.update((d) => {
      d.pages.push({
        ...structuredClone(d.pages[0]!),
        id: 100,
        slug: 'mine',
        title: 'Mine',
        status: 'draft',
        author_id: ctxFor('contributor').user.id,
      });
    });
    const own = await run(site, 'pages_list', { status: 'draft' }, ctxFor('contributor'));
    expect(own.pages.map((p: Page) => p.id)).toEqual([100]);
    expect(
      (await run(site, 'pages_search', { query: 'mine', status: 'any' }, ctxFor('author'))).results.map(
        (r: Page) => r.id,
      ),
    ).not.toContain(100);
    // The page index resource follows the same rule.
    const index = site.plugin.resources!()[0]!;
    const listed = (ctx: ReturnType<typeof ctxFor>) =>
      index.read(ctx).then((t) => (JSON.parse(t) as { pages: Page[] }).pages.map((p) => p.id));
    expect(await listed(ctxFor('contributor'))).toContain(100);
    expect(await listed(ctxFor('contributor'))).not.toContain(7);
    expect(await listed(ctxFor('author'))).not.toContain(100);
    expect(await listed(ctxFor('editor'))).toEqual(expect.arrayContaining([7, 100]));
    // translate_page shows the source's text in its preview: another user's draft is not found for an author.
    await expect(plan(site, 'translate_page', { id: 7, target_language: 'fr' }, ctxFor('author'))).rejects.toSatisfy(
      (e) => code(e) === 'not_found',
    );
  });

  it('refuses bad filters at the schema', () => {
    const input = site.read('pages_list').input;
    for (const bad of [
      { per_page: 0 },
      { per_page: 101 },
      { page: 0 },
      { status: 'trash' },
      { language: 'English' },
      { modified_after: 'yesterday' },
    ]) {
      expect(input.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('pages_get', () => {
  beforeEach(async () => {
    site = await openSite();
  });

  it('gets a page by id or by slug, with content and url', async () => {
    const byId = await run(site, 'pages_get', { id: 8 });
    expect(byId.page).toMatchObject({
      slug: 'ueber-uns',
      language: 'de',
      url: 'https://northbank-coffee.example/de/ueber-uns/',
      version: 1,
    });
    expect(byId.page.content).toMatch(/^# Über uns/);
    const bySlug = await run(site, 'pages_get', { slug: 'ueber-uns' });
    expect(bySlug).toEqual(byId);
  });

  it('answers not_found for unknown ids and slugs, and for drafts a reader cannot see', async () => {
    await expect(run(site, 'pages_get', { id: 999 })).rejects.toSatisfy((e) => code(e) === 'not_found');
    await expect(run(site, 'pages_get', { slug: 'nope' })).rejects.toSatisfy((e) => code(e) === 'not_found');
    await expect(run(site, 'pages_get', { id: 7 }, ctxFor('subscriber'))).rejects.toSatisfy(
      (e) => code(e) === 'not_found',
    );
    await expect(run(site, 'pages_get', { id: 7 }, ctxFor('contributor'))).rejects.toSatisfy(
      (e) => code(e) === 'not_found',
    );
    expect((await run(site, 'pages_get', { id: 7 }, ctxFor('editor'))).page.status).toBe('draft');
  });

  it('needs exactly one of id and slug', () => {
    const input = site.read('pages_get').input;
    expect(input.safeParse({}).success).toBe(false);
    expect(input.safeParse({ id: 1, slug: 'home' }).success).toBe(false);
    expect(input.safeParse({ id: -1 }).success).toBe(false);
  });
});

describe('pages_search', () => {
  beforeEach(async () => {
    site = await openSite();
  });

  const ids = (out: Record<string, unknown>) => (out.results as { id: number }[]).map((r) => r.id);

  it('ranks the page about the query first, with a matching snippet', async () => {
    const out = await run(site, 'pages_search', { query: 'pour over' });
    expect(out.results[0]).toMatchObject({ id: 5, slug: 'pour-over-brewing-guide' });
    expect(out.results[0].matched_fields).toEqual(expect.arrayContaining(['title', 'slug', 'content']));
    expect(out.results[0].snippet.toLowerCase()).toContain('pour');
    expect(out.results.map((r: { score: number }) => r.score)).toEqual(
      [...out.results.map((r: { score: number }) => r.score)].sort((a, b) => b - a),
    );
  });

  it('finds a word that only one page uses, and nothing for words no page uses', async () => {
    expect(ids(await run(site, 'pages_search', { query: 'caffeine' }))).toEqual([6]);
    const none = await run(site, 'pages_search', { query: 'zeppelin' });
    expect(none).toEqual({ results: [], total: 0 });
  });

  it('weighs a title match over a body mention', async () => {
    const out = await run(site, 'pages_search', { query: 'wholesale' });
    expect(out.results[0].id).toBe(4);
    expect(ids(out)).toContain(1); // the home page mentions wholesale in its body
  });

  it('matches prefixes of longer words and folds accents', async () => {
    expect(ids(await run(site, 'pages_search', { query: 'roasting' }))).toContain(6);
    expect(ids(await run(site, 'pages_search', { query: 'decaf' }))[0]).toBe(3);
    expect(ids(await run(site, 'pages_search', { query: 'uber uns' }))[0]).toBe(8);
  });

  it('applies language, status and limit, and hides drafts from readers', async () => {
    expect(ids(await run(site, 'pages_search', { query: 'kaffee', language: 'de' }))).toEqual([8]);
    const limited = await run(site, 'pages_search', { query: 'coffee', limit: 2 });
    expect(limited.results).toHaveLength(2);
    expect(limited.total).toBeGreaterThan(2);
    expect(ids(await run(site, 'pages_search', { query: 'subscriptions' }))).toEqual([7]);
    expect(ids(await run(site, 'pages_search', { query: 'subscriptions' }, ctxFor('subscriber')))).toEqual([]);
    expect(ids(await run(site, 'pages_search', { query: 'subscriptions', status: 'publish' }))).toEqual([]);
  });
});
