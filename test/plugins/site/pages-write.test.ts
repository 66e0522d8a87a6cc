import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatehouseError } from '../../../main/core/errors.ts';
import type { CallContext, WritePlan } from '../../../main/core/calls/tool.ts';
import { ADMIN_ID, ctxFor, openSite, pageById, plan, type SiteFixture } from './site-fixture.ts';

let site: SiteFixture;
beforeEach(async () => {
  site = await openSite();
});
afterEach(async () => site.cleanup());

const code = (e: unknown) => (e as GatehouseError).code;
const admin = ctxFor('administrator');
const author = ctxFor('author');

/** Apply a plan the way staging does: the payload has been through JSON in the transient store. */
async function apply(name: string, p: WritePlan, ctx: CallContext = admin) {
  const out = await site.write(name).apply(JSON.parse(JSON.stringify(p.payload)), ctx);
  return out.structured as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Preview, and prove that doing so changed nothing in memory or on disk. */
async function previewOnly(name: string, input: Record<string, unknown>, ctx: CallContext = admin): Promise<WritePlan> {
  const before = await site.snapshot();
  const p = await plan(site, name, input, ctx);
  expect(await site.snapshot()).toEqual(before);
  return p;
}

describe('pages_create', () => {
  it('previews a draft field by field, then creates exactly that on apply', async () => {
    const p = await previewOnly(
      'pages_create',
      { title: 'Brewing with an AeroPress', content: '# AeroPress\n\nShort and sweet.', focus_keyword: 'aeropress' },
      author,
    );
    expect(p.preview.summary).toBe(
      "Create draft page 'Brewing with an AeroPress' at /brewing-with-an-aeropress/ (or the next free slug, e.g. -2, if that one is taken when this is approved)",
    );
    expect(p.target).toBeNull();
    expect(p.target_version).toBeNull();
    expect(Object.fromEntries(p.preview.changes.map((c) => [c.field, c.after]))).toEqual({
      title: 'Brewing with an AeroPress',
      slug: 'brewing-with-an-aeropress',
      status: 'draft',
      language: 'en',
      focus_keyword: 'aeropress',
      content: '# AeroPress\n\nShort and sweet.',
    });
    const out = await apply('pages_create', p, author);
    expect(out.page).toMatchObject({
      id: 9,
      slug: 'brewing-with-an-aeropress',
      status: 'draft',
      version: 1,
      author_id: author.user.id,
      language: 'en',
    });
    const stored = pageById(site, 9)!;
    for (const c of p.preview.changes) expect(stored[c.field as keyof typeof stored], c.field).toEqual(c.after);
    expect(stored.created).toBe(new Date(site.clock.now()).toISOString());
    expect(site.store.read().next_id).toBe(10);
  });

  it('derives a free slug from the title, but refuses an explicit slug that is taken', async () => {
    const p = await previewOnly('pages_create', { title: 'About us' });
    expect(p.preview.summary).toContain('/about-us-2/');
    // An explicit slug does not move: its preview promises it.
    expect(
      (await previewOnly('pages_create', { title: 'Elsewhere', slug: 'elsewhere' })).preview.summary,
    ).not.toContain('next free slug');
    await expect(plan(site, 'pages_create', { title: 'Another', slug: 'about-us' }, admin)).rejects.toSatisfy(
      (e) => code(e) === 'conflict',
    );
  });

  it('derives the slug at apply time when the agent chose none: three creations with one title become x, x-2, x-3', async () => {
    const plans = [];
    for (let i = 0; i < 3; i++) plans.push(await previewOnly('pages_create', { title: 'Cold brew at home' }));
    // Staged one after the other, each previewed the slug free at that moment.
    for (const p of plans) expect(p.preview.summary).toContain('/cold-brew-at-home/');
    // The preview says the slug may still change; the result names the one taken, and says it moved.
    for (const p of plans) expect(p.preview.summary).toContain('next free slug');
    const slugs = [];
    const texts = [];
    for (const p of plans) {
      const out = await site.write('pages_create').apply(JSON.parse(JSON.stringify(p.payload)), admin);
      slugs.push((out.structured as { page: { slug: string } }).page.slug);
      texts.push(out.text);
    }
    expect(slugs).toEqual(['cold-brew-at-home', 'cold-brew-at-home-2', 'cold-brew-at-home-3']);
    expect(texts[0]).toBe("Created page 'Cold brew at home' (#9) at /cold-brew-at-home/ (draft).");
    expect(texts[1]).toBe(
      "Created page 'Cold brew at home' (#10) at /cold-brew-at-home-2/ (not /cold-brew-at-home/ as previewed: another page took that slug first) (draft).",
    );
  });

  it('refuses at apply when the slug was taken after the preview, changing nothing', async () => {
    const first = await previewOnly('pages_create', { title: 'Cold brew', slug: 'cold-brew' });
    const second = await previewOnly('pages_create', { title: 'Cold brew again', slug: 'cold-brew' });
    await apply('pages_create', first);
    const before = await site.snapshot();
    await expect(apply('pages_create', second)).rejects.toSatisfy((e) => code(e) === 'conflict');
    expect(await site.snapshot()).toEqual(before);
  });

  it('needs publish_pages to create a page already published', async () => {
    await expect(
      plan(site, 'pages_create', { title: 'Live now', status: 'publish' }, ctxFor('contributor')),
    ).rejects.toSatisfy((e) => code(e) === 'forbidden');
    const p = await plan(site, 'pages_create', { title: 'Live now', status: 'publish' }, author);
    expect(p.preview.summary).toMatch(/^Create published page/);
  });

  it('concurrent applies of creations get distinct ids', async () => {
    const plans = await Promise.all(
      ['One', 'Two', 'Three'].map((t) => plan(site, 'pages_create', { title: `Post ${t}` }, admin)),
    );
    const outs = await Promise.all(plans.map((p) => apply('pages_create', p)));
    expect(outs.map((o) => o.page.id).sort((a, b) => a - b)).toEqual([9, 10, 11]);
    expect(site.store.read().pages).toHaveLength(11);
  });
});

describe('pages_update', () => {
  it('previews a readable diff and applies exactly the previewed fields', async () => {
    const before = pageById(site, 2)!;
    const p = await previewOnly('pages_update', {
      id: 2,
      title: 'About Northbank',
      seo_description: 'Who we are and how we roast.',
      excerpt: before.excerpt,
    });
    expect(p.preview.summary).toBe("Update page 'About us' (#2): title, seo_description");
    expect(p.preview.changes).toEqual([
      { field: 'title', before: 'About us', after: 'About Northbank' },
      { field: 'seo_description', before: '', after: 'Who we are and how we roast.' },
    ]);
    expect(p.target).toBe('page:2');
    expect(p.target_version).toBe(1);
    expect(await site.write('pages_update').currentVersion!('page:2')).toBe(1);

    site.clock.advance(60_000);
    const out = await apply('pages_update', p);
    const after = pageById(site, 2)!;
    expect(out.page).toMatchObject({ id: 2, title: 'About Northbank', version: 2 });
    expect(after).toEqual({
      ...before,
      title: 'About Northbank',
      seo_description: 'Who we are and how we roast.',
      version: 2,
      modified: new Date(site.clock.now()).toISOString(),
    });
    expect(await site.write('pages_update').currentVersion!('page:2')).toBe(2);
  });

  it('shows long content changes as a compact line diff', async () => {
    const page = pageById(site, 5)!;
    const content = page.content.replace(
      'Use 15 g of coffee and 250 g of water',
      'Use 18 g of coffee and 300 g of water',
    );
    const p = await previewOnly('pages_update', { id: 5, content });
    const change = p.preview.changes.find((c) => c.field === 'content')!;
    expect(change.before).toMatch(/^@@ line \d+ @@/);
    expect(change.before).toContain('- Use 15 g of coffee');
    expect(change.after).toContain('+ Use 18 g of coffee');
    expect(String(change.after).length).toBeLessThan(800);
    await apply('pages_update', p);
    expect(pageById(site, 5)!.content).toBe(content);
  });

  it('refuses a stale preview at apply, in the version check and in apply itself', async () => {
    const p = await plan(site, 'pages_update', { id: 3, title: 'Coffee beans' }, admin);
    const other = await plan(site, 'pages_update', { id: 3, excerpt: 'Changed in between.' }, admin);
    await apply('pages_update', other);
    expect(await site.write('pages_update').currentVersion!('page:3')).toBe(2);
    const before = await site.snapshot();
    await expect(apply('pages_update', p)).rejects.toSatisfy((e) => code(e) === 'stale_preview');
    expect(await site.snapshot()).toEqual(before);
  });

  it('lets exactly one of two concurrent applies of the same version through', async () => {
    const a = await plan(site, 'pages_update', { id: 4, title: 'Wholesale A' }, admin);
    const b = await plan(site, 'pages_update', { id: 4, title: 'Wholesale B' }, admin);
    const results = await Promise.allSettled([apply('pages_update', a), apply('pages_update', b)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(code(failed.reason)).toBe('stale_preview');
    expect(pageById(site, 4)).toMatchObject({ version: 2, title: 'Wholesale A' });
  });

  it('checks if_version at preview time', async () => {
    await expect(plan(site, 'pages_update', { id: 3, title: 'X', if_version: 7 }, admin)).rejects.toSatisfy(
      (e) => code(e) === 'stale_preview',
    );
    expect((await plan(site, 'pages_update', { id: 3, title: 'X', if_version: 1 }, admin)).target_version).toBe(1);
  });

  it('answers not_found, conflict and invalid_value for the usual mistakes', async () => {
    await expect(plan(site, 'pages_update', { id: 99, title: 'X' }, admin)).rejects.toSatisfy(
      (e) => code(e) === 'not_found',
    );
    await expect(plan(site, 'pages_update', { id: 3, slug: 'wholesale' }, admin)).rejects.toSatisfy(
      (e) => code(e) === 'conflict',
    );
    await expect(plan(site, 'pages_update', { id: 3, title: 'Our coffees' }, admin)).rejects.toSatisfy(
      (e) => code(e) === 'invalid_value',
    );
    await expect(plan(site, 'pages_update', { id: 3 }, admin)).rejects.toSatisfy((e) => code(e) === 'invalid_value');
    expect(await site.write('pages_update').currentVersion!('page:99')).toBeNull();
    expect(await site.write('pages_update').currentVersion!('post:3')).toBeNull();
  });

  it('refuses at apply when another page took the slug after the preview', async () => {
    const p = await plan(site, 'pages_update', { id: 3, slug: 'beans' }, admin);
    await apply('pages_create', await plan(site, 'pages_create', { title: 'Beans', slug: 'beans' }, admin));
    await expect(apply('pages_update', p)).rejects.toSatisfy((e) => code(e) === 'conflict');
    expect(pageById(site, 3)!.slug).toBe('coffees');
  });

  it('keeps authors to their own pages unless they have edit_others_pages', async () => {
    await expect(plan(site, 'pages_update', { id: 2, title: 'Mine now' }, author)).rejects.toSatisfy(
      (e) => code(e) === 'forbidden',
    );
    const own = await apply(
      'pages_create',
      await plan(site, 'pages_create', { title: 'Author notes' }, author),
      author,
    );
    const p = await plan(site, 'pages_update', { id: own.page.id, title: 'Author notes, revised' }, author);
    expect(p.preview.summary).toContain('title');
    expect(
      (await plan(site, 'pages_update', { id: own.page.id, title: 'Edited by editor' }, ctxFor('editor'))).target,
    ).toBe(`page:${own.page.id}`);
    await expect(plan(site, 'pages_update', { id: 2, title: 'X' }, ctxFor('subscriber'))).rejects.toSatisfy(
      (e) => code(e) === 'forbidden',
    );
  });

  it('refuses a tampered payload', async () => {
    await expect(site.write('pages_update').apply({ id: 'two', base_version: 1, set: {} }, admin)).rejects.toSatisfy(
      (e) => code(e) === 'invalid_value',
    );
    await expect(
      site.write('pages_update').apply({ id: 2, base_version: 1, set: { slug: 'Not A Slug' } }, admin),
    ).rejects.toSatisfy((e) => code(e) === 'invalid_value');
  });
});

describe('pages_delete', () => {
  it('previews the deletion and the unlinking, then deletes and unlinks on apply', async () => {
    const p = await previewOnly('pages_delete', { id: 2 });
    expect(p.preview.summary).toBe("Delete published page 'About us' (#2) at /about-us/; unlinks 1 translation(s)");
    expect(p.preview.changes).toContainEqual({
      field: "translations of #8 ('Über uns')",
      before: 'en: #2',
      after: '(none)',
    });
    expect(p.preview.changes.find((c) => c.field === 'title')).toEqual({ field: 'title', before: 'About us' });
    const out = await apply('pages_delete', p);
    expect(out).toEqual({ deleted: { id: 2, title: 'About us', slug: 'about-us' }, unlinked: [8] });
    expect(pageById(site, 2)).toBeUndefined();
    expect(pageById(site, 8)).toMatchObject({ translations: {}, version: 2 });
    expect(await site.write('pages_delete').currentVersion!('page:2')).toBeNull();
    await expect(apply('pages_delete', p)).rejects.toSatisfy((e) => code(e) === 'stale_preview');
  });

  it("needs delete_pages, and edit_others_pages for someone else's page", async () => {
    await expect(plan(site, 'pages_delete', { id: 7 }, author)).rejects.toSatisfy((e) => code(e) === 'forbidden');
    const editorCtx = ctxFor('editor');
    expect((await plan(site, 'pages_delete', { id: 7 }, editorCtx)).target).toBe('page:7');
    await expect(plan(site, 'pages_delete', { id: 70 }, editorCtx)).rejects.toSatisfy((e) => code(e) === 'not_found');
  });
});

describe('pages_publish', () => {
  it('publishes a draft on apply only, and unpublishes', async () => {
    const p = await previewOnly('pages_publish', { id: 7 });
    expect(p.preview).toMatchObject({
      summary: "Publish page 'Coffee subscriptions' (#7) at /coffee-subscriptions/",
      changes: [{ field: 'status', before: 'draft', after: 'publish' }],
    });
    expect(pageById(site, 7)!.status).toBe('draft');
    await apply('pages_publish', p);
    expect(pageById(site, 7)).toMatchObject({ status: 'publish', version: 2 });
    const back = await plan(site, 'pages_publish', { id: 7, action: 'unpublish' }, admin);
    await apply('pages_publish', back);
    expect(pageById(site, 7)).toMatchObject({ status: 'draft', version: 3 });
  });

  it('refuses what makes no sense or is not allowed', async () => {
    await expect(plan(site, 'pages_publish', { id: 1 }, admin)).rejects.toSatisfy((e) => code(e) === 'conflict');
    await expect(plan(site, 'pages_publish', { id: 7 }, ctxFor('contributor'))).rejects.toSatisfy(
      (e) => code(e) === 'forbidden',
    );
    await expect(plan(site, 'pages_publish', { id: 7 }, author)).rejects.toSatisfy((e) => code(e) === 'forbidden');
    await expect(plan(site, 'pages_publish', { id: 77 }, admin)).rejects.toSatisfy((e) => code(e) === 'not_found');
    const p = await plan(site, 'pages_publish', { id: 7 }, admin);
    await apply('pages_update', await plan(site, 'pages_update', { id: 7, title: 'Subscriptions' }, admin));
    await expect(apply('pages_publish', p)).rejects.toSatisfy((e) => code(e) === 'stale_preview');
    expect(pageById(site, 7)!.status).toBe('draft');
  });

  it('records the author so ownership rules work', async () => {
    expect(pageById(site, 1)!.author_id).toBe(ADMIN_ID);
  });
});
