import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FEATURE_PLANS } from '../../../main/contract/entitlements.ts';
import { PAGES_RESOURCE_URI } from '../../../main/plugins/site/index.ts';
import { analyzePage } from '../../../main/plugins/site/seo-analyze.ts';
import { SiteData } from '../../../main/plugins/site/site-data.ts';
import { ADMIN_ID, ctxFor, openSite, plan, type SiteFixture } from './site-fixture.ts';

let site: SiteFixture;
afterEach(async () => site?.cleanup());

describe('seedIfEmpty', () => {
  it('writes the sample coffee-roaster site once, to disk, owned by the admin', async () => {
    site = await openSite({ seed: false });
    expect(await site.plugin.seedIfEmpty()).toBe(true);
    expect(await site.plugin.seedIfEmpty()).toBe(false);
    const onDisk = SiteData.parse(JSON.parse(await readFile(site.file, 'utf8')));
    expect(onDisk.pages).toHaveLength(8);
    expect(onDisk.site.name).toBe('Northbank Coffee Roasters');
    expect(onDisk.next_id).toBe(9);
    expect(onDisk.seeded_at).toBe(new Date(site.clock.now()).toISOString());
    expect(new Set(onDisk.pages.map((p) => p.author_id))).toEqual(new Set([ADMIN_ID]));
    expect(onDisk.pages.filter((p) => p.status === 'draft').map((p) => p.slug)).toEqual(['coffee-subscriptions']);
    expect(onDisk.pages.every((p) => p.content.startsWith('# '))).toBe(true);
  });

  it('links the German translation both ways', async () => {
    site = await openSite();
    const pages = site.store.read().pages;
    const about = pages.find((p) => p.slug === 'about-us')!;
    const de = pages.find((p) => p.slug === 'ueber-uns')!;
    expect(about.translations).toEqual({ de: de.id });
    expect(de.translations).toEqual({ en: about.id });
    expect(de.language).toBe('de');
  });

  it('seeds pages whose internal links all resolve and whose outlines are clean', async () => {
    site = await openSite();
    const data = site.store.read();
    const slugs = new Map(data.pages.map((p) => [p.slug, p.status]));
    for (const p of data.pages.filter((x) => x.status === 'publish')) {
      const report = analyzePage(p, { siteUrl: data.site.url, siteName: data.site.name, slugs });
      const ids = report.findings.filter((f) => f.severity !== 'good').map((f) => f.id);
      expect(ids, p.slug).not.toContain('broken_internal_links');
      expect(ids, p.slug).not.toContain('h1');
      expect(ids, p.slug).not.toContain('heading_levels');
    }
    // the blog posts have real structure: H2 and H3 sections and internal links
    const guide = data.pages.find((p) => p.slug === 'pour-over-brewing-guide')!;
    expect(guide.content).toMatch(/^### /m);
    expect(guide.content).toMatch(/\]\(\/coffees\/\)/);
  });

  it('does not seed again after every page was deleted', async () => {
    site = await openSite();
    await site.store.update((d) => {
      d.pages = [];
    });
    expect(await site.plugin.seedIfEmpty()).toBe(false);
    expect(site.store.read().pages).toEqual([]);
  });

  it('keeps site settings someone already changed', async () => {
    const data = SiteData.parse({
      site: { name: 'Velo Works', description: '', url: 'https://velo.example/', language: 'en', timezone: 'UTC' },
      pages: [],
      next_id: 1,
    });
    site = await openSite({ seed: false, data });
    expect(await site.plugin.seedIfEmpty()).toBe(true);
    expect(site.store.read().site.name).toBe('Velo Works');
  });

  it('two concurrent first runs seed once', async () => {
    site = await openSite({ seed: false });
    const results = await Promise.all([site.plugin.seedIfEmpty(), site.plugin.seedIfEmpty()]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(site.store.read().pages).toHaveLength(8);
  });
});

describe('identity, status and resources', () => {
  it('describes the site for an agent', async () => {
    site = await openSite();
    const id = site.plugin.identity();
    expect(id).toMatchObject({
      name: 'Northbank Coffee Roasters',
      url: 'https://northbank-coffee.example/',
      language: 'en',
      languages: ['en', 'de'],
      timezone: 'Europe/London',
      pages: { total: 8, publish: 7, draft: 1 },
      content: { format: 'markdown' },
    });
    expect(id.tools.map((t) => t.name)).toEqual(site.plugin.tools().map((t) => t.name));
    expect(id.content.conventions.join(' ')).toMatch(/Markdown/);
    expect(JSON.parse(JSON.stringify(id))).toEqual(id);
    expect(site.plugin.status?.()).toEqual({ status: 'ok', detail: 'Northbank Coffee Roasters: 8 page(s)' });
    expect(site.plugin).toMatchObject({ id: 'site', kind: 'site' });
  });

  it('serves the page index as JSON, without drafts for readers who cannot edit', async () => {
    site = await openSite();
    const res = site.plugin.resources?.().find((r) => r.uri === PAGES_RESOURCE_URI);
    expect(res).toMatchObject({ mimeType: 'application/json', capability: 'read' });
    const admin = JSON.parse(await res!.read(ctxFor('administrator')));
    expect(admin.total).toBe(8);
    expect(admin.pages[0]).toMatchObject({ id: 1, slug: 'home', url: 'https://northbank-coffee.example/home/' });
    const reader = JSON.parse(await res!.read(ctxFor('subscriber')));
    expect(reader.pages.map((p: { slug: string }) => p.slug)).not.toContain('coffee-subscriptions');
    expect(reader.total).toBe(7);
  });
});

describe('tool declarations', () => {
  const expected: Record<string, [capability: string, feature: string, write: boolean]> = {
    pages_list: ['read', 'site.pages.read', false],
    pages_get: ['read', 'site.pages.read', false],
    pages_search: ['read', 'site.pages.read', false],
    pages_create: ['edit_pages', 'site.pages.write', true],
    pages_update: ['edit_pages', 'site.pages.write', true],
    pages_delete: ['delete_pages', 'site.pages.write', true],
    pages_publish: ['publish_pages', 'site.pages.write', true],
    seo_analyze_page: ['read', 'seo.analyze', false],
    seo_keyword_ideas: ['read', 'seo.keywords', false],
    translate_page: ['use_ai', 'verto.translate', true],
  };

  it('declares capability, feature, write flag and annotations for each tool', async () => {
    site = await openSite();
    const tools = site.plugin.tools();
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(expected).sort());
    for (const t of tools) {
      const [capability, feature, write] = expected[t.name]!;
      expect({ capability: t.capability, feature: t.feature, write: t.write, plugin: t.plugin }, t.name).toEqual({
        capability,
        feature,
        write,
        plugin: 'site',
      });
      expect(FEATURE_PLANS[t.feature], t.feature).toBeDefined();
      expect(t.annotations?.readOnlyHint, t.name).toBe(!write);
      expect(typeof t.annotations?.destructiveHint, t.name).toBe('boolean');
      // the title has one source: the tool's own title (the MCP layer copies it into annotations.title)
      expect(t.title, t.name).toBeTruthy();
      expect(Object.keys(t.annotations ?? {}), t.name).not.toContain('title');
      if (write) expect('preview' in t && 'apply' in t).toBe(true);
      else expect(t.output, `${t.name} has an output schema`).toBeDefined();
    }
    expect(tools.find((t) => t.name === 'pages_delete')?.annotations?.destructiveHint).toBe(true);
    expect(tools.find((t) => t.name === 'translate_page')?.annotations?.openWorldHint).toBe(true);
  });

  it('describes every input field in the JSON Schema clients see', async () => {
    site = await openSite();
    for (const t of site.plugin.tools()) {
      const schema = z.toJSONSchema(t.input as z.ZodObject, { io: 'input' }) as {
        properties: Record<string, { description?: string }>;
      };
      for (const [field, prop] of Object.entries(schema.properties))
        expect(prop.description, `${t.name}.${field}`).toBeTruthy();
    }
  });

  it('enforces the limits: title length, content size, slug pattern', async () => {
    site = await openSite();
    const input = site.write('pages_create').input;
    expect(input.safeParse({ title: 'x'.repeat(200) }).success).toBe(true);
    expect(input.safeParse({ title: 'x'.repeat(201) }).success).toBe(false);
    expect(input.safeParse({ title: '   ' }).success).toBe(false);
    expect(input.safeParse({ title: 'ok', content: 'a'.repeat(200 * 1024) }).success).toBe(true);
    expect(input.safeParse({ title: 'ok', content: 'a'.repeat(200 * 1024 + 1) }).success).toBe(false);
    expect(input.safeParse({ title: 'ok', content: 'ü'.repeat(110 * 1024) }).success).toBe(false); // 220 KB of UTF-8
    for (const bad of ['About Us', 'about_us', '-about', 'about--us', 'über', ''])
      expect(input.safeParse({ title: 'ok', slug: bad }).success, bad).toBe(false);
    expect(input.safeParse({ title: 'ok', slug: 'about-us-2' }).success).toBe(true);
    // the refusal happens before preview: nothing reaches the tool
    await expect(
      plan(site, 'pages_create', { title: 'ok', slug: 'Bad Slug' }, ctxFor('administrator')),
    ).rejects.toThrow();
  });
});
