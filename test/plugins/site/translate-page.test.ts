import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatehouseError } from '../../../main/core/errors.ts';
import type { CallContext, WritePlan } from '../../../main/core/calls/tool.ts';
import { ctxFor, HOW_TO, openSite, pageById, plan, type SiteFixture } from './site-fixture.ts';

let site: SiteFixture;
beforeEach(async () => {
  site = await openSite();
});
afterEach(async () => site.cleanup());

const code = (e: unknown) => (e as GatehouseError).code;
const admin = ctxFor('administrator');

async function apply(p: WritePlan, ctx: CallContext = admin) {
  const out = await site.write('translate_page').apply(JSON.parse(JSON.stringify(p.payload)), ctx);
  return out.structured as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

describe('translate_page without an AI provider', () => {
  it('fails with provider_unavailable, says how to configure one, and stages nothing', async () => {
    site.setProvider(null);
    const before = await site.snapshot();
    const err = await plan(site, 'translate_page', { id: 3, target_language: 'de' }, admin).catch((e: unknown) => e);
    expect(code(err)).toBe('provider_unavailable');
    expect((err as Error).message).toBe(`no AI provider is configured: ${HOW_TO}`);
    expect(await site.snapshot()).toEqual(before);
  });
});

describe('translate_page reports the AI tokens it spends', () => {
  it('one usage event per provider answer, with its token counts, even when a later field fails; one translation event with the characters', async () => {
    await plan(site, 'translate_page', { id: 3, target_language: 'de' }, admin);
    const calls = site.provider.calls.length;
    const translated = site.usage.filter((u) => u.event === 'translation.page.translated');
    expect(translated).toEqual([
      {
        event: 'translation.page.translated',
        product: 'verto',
        feature: 'verto.translate',
        model: 'upper-1',
        units: site.provider.calls.reduce((n, c) => n + [...c.prompt].length, 0),
      },
    ]);
    site.usage.splice(site.usage.indexOf(translated[0]!), 1);
    expect(site.usage).toHaveLength(calls);
    const source = pageById(site, 3)!;
    expect(site.usage[0]).toEqual({
      event: 'ai.generation.completed',
      product: 'verto',
      feature: 'verto.translate',
      model: 'upper-1',
      units: 1,
      tokens_input: source.title.length,
      tokens_output: expect.any(Number),
    });
    expect(site.usage.reduce((n, u) => n + u.tokens_input!, 0)).toBe(
      site.provider.calls.reduce((n, c) => n + c.prompt.length, 0),
    );

    // the provider answers the first field, then fails: the tokens of that first answer are still counted
    site.usage.length = 0;
    let answered = 0;
    const real = site.provider.generate.bind(site.provider);
    site.provider.generate = (req) => (answered++ === 0 ? real(req) : Promise.reject(new Error('provider down')));
    await expect(plan(site, 'translate_page', { id: 4, target_language: 'fr' }, admin)).rejects.toMatchObject({
      code: 'upstream_error',
    });
    // no translation was made: only the answer's tokens count
    expect(site.usage).toHaveLength(1);
    expect(site.usage[0]!.event).toBe('ai.generation.completed');
    expect(site.usage[0]!.tokens_input).toBeGreaterThan(0);
  });
});

describe('translate_page with a provider', () => {
  it('previews the generated translation, changes nothing, then creates and links it on apply', async () => {
    const before = await site.snapshot();
    const p = await plan(site, 'translate_page', { id: 3, target_language: 'de' }, admin);
    expect(await site.snapshot()).toEqual(before);

    // one provider call per non-empty field, instructions in the system message, the text as the prompt
    const source = pageById(site, 3)!;
    expect(site.provider.calls.map((c) => c.prompt)).toEqual([
      source.title,
      source.excerpt,
      source.seo_title,
      source.seo_description,
      source.focus_keyword,
      source.content,
    ]);
    expect(site.provider.calls.every((c) => /from English \(en\) into German \(de\)/.test(c.system ?? ''))).toBe(true);

    expect(p.target).toBe('page:3');
    expect(p.target_version).toBe(1);
    expect(p.preview.summary).toBe(
      "Translate page 'Our coffees' (#3) into German: create draft '[de] Our COFFEES' at /de-our-coffees/",
    );
    const change = (field: string) => p.preview.changes.find((c) => c.field === field);
    expect(change('title')).toEqual({ field: 'title', after: '[de] Our COFFEES' });
    expect(change('language')).toEqual({ field: 'language', after: 'de' });
    expect(change('status')).toEqual({ field: 'status', after: 'draft' });
    expect(change('translations')).toEqual({ field: 'translations', after: 'en: #3' });
    expect(change("translations of #3 ('Our coffees')")).toEqual({
      field: "translations of #3 ('Our coffees')",
      before: '(none)',
      after: 'de: (the new page)',
    });

    const out = await apply(p);
    expect(out).toMatchObject({ source_id: 3, linked: [3, 9], provider: 'test-double', model: 'upper-1' });
    const created = pageById(site, 9)!;
    expect(created).toMatchObject({
      language: 'de',
      status: 'draft',
      slug: 'de-our-coffees',
      translations: { en: 3 },
      author_id: admin.user.id,
      version: 1,
    });
    expect(created.content).toContain('# Our COFFEES\n\nAll of our COFFEES are ROASTED');
    expect(created.content).toContain('](/pour-over-brewing-guide/)'); // link targets survive
    expect(pageById(site, 3)).toMatchObject({ translations: { de: 9 }, version: 2 });
    // nothing else moved
    expect(
      site.store
        .read()
        .pages.filter((x) => ![3, 9].includes(x.id))
        .every((x) => x.version === 1),
    ).toBe(true);
  });

  it('refuses to replace an existing translation unless asked to', async () => {
    await expect(plan(site, 'translate_page', { id: 2, target_language: 'de' }, admin)).rejects.toSatisfy(
      (e) => code(e) === 'conflict',
    );
    expect(site.provider.calls).toHaveLength(0); // refused before spending AI tokens
  });

  it('with overwrite, previews a diff against the existing translation and updates it in place', async () => {
    const existing = pageById(site, 8)!;
    const p = await plan(site, 'translate_page', { id: 2, target_language: 'de', overwrite: true }, admin);
    expect(p.preview.summary).toMatch(
      /^Update the German translation 'Über uns' \(#8\) of page 'About us' \(#2\): title, excerpt, seo_title, seo_description, focus_keyword, content$/,
    );
    expect(p.preview.changes.find((c) => c.field === 'title')).toEqual({
      field: 'title',
      before: 'Über uns',
      after: '[de] ABOUT us',
    });
    expect(p.preview.changes.find((c) => c.field === 'slug')).toBeUndefined();
    expect(pageById(site, 8)).toEqual(existing);
    await apply(p);
    expect(pageById(site, 8)).toMatchObject({
      id: 8,
      slug: 'ueber-uns',
      status: 'publish',
      title: '[de] ABOUT us',
      translations: { en: 2 },
      version: 2,
    });
    expect(pageById(site, 2)).toMatchObject({ translations: { de: 8 }, version: 1 });
    expect(site.store.read().pages).toHaveLength(8);
  });

  it('links a third language to the whole group', async () => {
    await apply(await plan(site, 'translate_page', { id: 2, target_language: 'fr' }, admin));
    expect(pageById(site, 9)).toMatchObject({ language: 'fr', translations: { en: 2, de: 8 } });
    expect(pageById(site, 2)!.translations).toEqual({ de: 8, fr: 9 });
    expect(pageById(site, 8)!.translations).toEqual({ en: 2, fr: 9 });
  });

  it('refuses a stale preview when the source or the translation changed', async () => {
    const p = await plan(site, 'translate_page', { id: 3, target_language: 'de' }, admin);
    await site.store.update((d) => {
      const page = d.pages.find((x) => x.id === 3)!;
      page.title = 'Coffees';
      page.version += 1;
    });
    expect(await site.write('translate_page').currentVersion!(p.target!)).toBe(2);
    await expect(apply(p)).rejects.toSatisfy((e) => code(e) === 'stale_preview');
    expect(site.store.read().pages).toHaveLength(8);

    const over = await plan(site, 'translate_page', { id: 2, target_language: 'de', overwrite: true }, admin);
    await site.store.update((d) => {
      const page = d.pages.find((x) => x.id === 8)!;
      page.excerpt = 'Neu.';
      page.version += 1;
    });
    await expect(apply(over)).rejects.toSatisfy((e) => code(e) === 'stale_preview');
    expect(pageById(site, 8)!.excerpt).toBe('Neu.');
  });

  it('answers not_found, invalid_value and forbidden', async () => {
    await expect(plan(site, 'translate_page', { id: 99, target_language: 'de' }, admin)).rejects.toSatisfy(
      (e) => code(e) === 'not_found',
    );
    await expect(plan(site, 'translate_page', { id: 3, target_language: 'en' }, admin)).rejects.toSatisfy(
      (e) => code(e) === 'invalid_value',
    );
    await expect(
      plan(site, 'translate_page', { id: 3, target_language: 'de' }, ctxFor('contributor')),
    ).rejects.toSatisfy((e) => code(e) === 'forbidden');
    await expect(
      plan(site, 'translate_page', { id: 2, target_language: 'de', overwrite: true }, ctxFor('author')),
    ).rejects.toSatisfy((e) => code(e) === 'forbidden');
    expect(site.write('translate_page').input.safeParse({ id: 3, target_language: 'German' }).success).toBe(false);
  });

  it('turns a provider failure or an empty answer into upstream_error and stages nothing', async () => {
    const before = await site.snapshot();
    site.provider.fail = new Error('socket hang up: key sk-secret');
    const err = await plan(site, 'translate_page', { id: 3, target_language: 'de' }, admin).catch((e: unknown) => e);
    expect(code(err)).toBe('upstream_error');
    expect((err as Error).message).not.toContain('sk-secret');
    site.provider.fail = null;
    site.setProvider({
      id: 'blank',
      generate: async () => ({ text: '  ', model: 'm', tokens_input: 1, tokens_output: 0 }),
    });
    await expect(plan(site, 'translate_page', { id: 3, target_language: 'de' }, admin)).rejects.toSatisfy(
      (e) => code(e) === 'upstream_error',
    );
    expect(await site.snapshot()).toEqual(before);
  });
});
