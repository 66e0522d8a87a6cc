import { z } from 'zod';
import { defineTool, type Tool } from '../../core/calls/tool.ts';
import { findVisiblePage, pageUrl, visiblePages, pageRefTarget } from './page-access.ts';
import { searchPages } from './page-search.ts';
import type { Page, SiteSettings } from './site-data.ts';
import { PLUGIN_ID, type SiteDeps } from './site-deps.ts';
import { f, hasOneRef, ONE_REF, PageOut, PageRef, PageSummary } from './tool-schemas.ts';
import { lazySchema } from '../../contract/lazy-schema.ts';

export const READ_ANNOTATIONS = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

export const toOut = (site: SiteSettings, p: Page): PageOut => ({ ...p, url: pageUrl(site, p) });
export const toSummary = (site: SiteSettings, p: Page): PageSummary => ({
  id: p.id,
  slug: p.slug,
  title: p.title,
  status: p.status,
  language: p.language,
  excerpt: p.excerpt,
  focus_keyword: p.focus_keyword,
  author_id: p.author_id,
  modified: p.modified,
  version: p.version,
  translations: { ...p.translations },
  url: pageUrl(site, p),
});

const ListInput = lazySchema(() =>
  z.object({
    status: z
      .enum(['any', 'draft', 'publish'])
      .default('any')
      .describe(
        'Only pages with this status; "any" for all. Drafts are listed only to their authors and to users who may edit others\' pages.',
      ),
    language: f.language.optional().describe('Only pages in this language, e.g. "de".'),
    author_id: z.string().min(1).max(100).optional().describe('Only pages by this user id.'),
    modified_after: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('Only pages modified after this ISO 8601 time.'),
    order_by: z.enum(['modified', 'title', 'id']).default('modified').describe('Sort key.'),
    order: z
      .enum(['asc', 'desc'])
      .optional()
      .describe('Sort direction; defaults to newest first for "modified", ascending otherwise.'),
    page: z.number().int().min(1).max(100_000).default(1).describe('1-based page of results.'),
    per_page: z.number().int().min(1).max(100).default(20).describe('Results per page, 1-100.'),
  }),
);

const ListOutput = lazySchema(() =>
  z.object({
    pages: z.array(PageSummary),
    total: z.number().int().describe('Pages matching the filters, across all result pages.'),
    page: z.number().int(),
    per_page: z.number().int(),
    total_pages: z.number().int(),
  }),
);

const GetInput = lazySchema(() => z.object(PageRef).refine(hasOneRef, ONE_REF));

const SearchInput = lazySchema(() =>
  z.object({
    query: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .describe(
        'Words to look for in titles, slugs, SEO fields, excerpts and content; longer words also match as prefixes ("roast" finds "roasting").',
      ),
    status: z.enum(['any', 'draft', 'publish']).default('any').describe('Only pages with this status.'),
    language: f.language.optional().describe('Only pages in this language.'),
    limit: z.number().int().min(1).max(50).default(10).describe('At most this many results, best first.'),
  }),
);

const SearchOutput = lazySchema(() =>
  z.object({
    results: z.array(
      z.object({
        id: f.id,
        slug: z.string(),
        title: z.string(),
        status: f.status,
        language: z.string(),
        url: z.string(),
        score: z.number().describe('Relevance; higher is better. Only comparable within one search.'),
        snippet: z.string().describe('The passage that matches best.'),
        matched_fields: z
          .array(z.string())
          .describe('Fields that contain a query word: title, slug, seo, excerpt, content.'),
      }),
    ),
    total: z.number().int().describe('All matching pages, before the limit.'),
  }),
);

export function pageReadTools(deps: SiteDeps): Tool[] {
  const list = defineTool({
    name: 'pages_list',
    title: 'List pages',
    description:
      "List the site's pages with filters (status, language, author, modified after) and pagination. Returns summaries; use pages_get for the full content.",
    input: ListInput,
    output: ListOutput,
    capability: 'read',
    feature: 'site.pages.read',
    plugin: PLUGIN_ID,
    write: false,
    annotations: READ_ANNOTATIONS,
    async run(input, ctx) {
      const data = deps.store.read();
      const after = input.modified_after ? Date.parse(input.modified_after) : null;
      const matches = visiblePages(data, ctx).filter(
        (p) =>
          (input.status === 'any' || p.status === input.status) &&
          (!input.language || p.language === input.language) &&
          (!input.author_id || p.author_id === input.author_id) &&
          (after === null || Date.parse(p.modified) > after),
      );
      const order = input.order ?? (input.order_by === 'modified' ? 'desc' : 'asc');
      const sign = order === 'asc' ? 1 : -1;
      const key = input.order_by;
      const sorted = [...matches].sort((a, b) => {
        const c =
          key === 'id'
            ? a.id - b.id
            : key === 'title'
              ? a.title.localeCompare(b.title)
              : a.modified.localeCompare(b.modified);
        return sign * c || a.id - b.id;
      });
      const start = (input.page - 1) * input.per_page;
      const structured = {
        pages: sorted.slice(start, start + input.per_page).map((p) => toSummary(data.site, p)),
        total: matches.length,
        page: input.page,
        per_page: input.per_page,
        total_pages: Math.ceil(matches.length / input.per_page),
      };
      const lines = structured.pages.map(
        (p) => `#${p.id} ${p.title} (/${p.slug}/, ${p.status}, ${p.language}, v${p.version})`,
      );
      return {
        structured,
        text: `${structured.total} page(s); page ${structured.page} of ${Math.max(1, structured.total_pages)}\n${lines.join('\n')}`,
      };
    },
  });

  const get = defineTool({
    name: 'pages_get',
    title: 'Get a page',
    description: 'Get one page with its full Markdown content, SEO fields, translations and version, by id or slug.',
    input: GetInput,
    target: pageRefTarget,
    output: lazySchema(() => z.object({ page: PageOut })),
    capability: 'read',
    feature: 'site.pages.read',
    plugin: PLUGIN_ID,
    write: false,
    annotations: READ_ANNOTATIONS,
    async run(input, ctx) {
      const data = deps.store.read();
      return { structured: { page: toOut(data.site, findVisiblePage(data, ctx, input)) } };
    },
  });

  const search = defineTool({
    name: 'pages_search',
    title: 'Search pages',
    description:
      "Full-text search over the site's pages, best match first, with the passage that matches. Title and SEO fields weigh more than body text.",
    input: SearchInput,
    output: SearchOutput,
    capability: 'read',
    feature: 'site.pages.read',
    plugin: PLUGIN_ID,
    write: false,
    annotations: READ_ANNOTATIONS,
    async run(input, ctx) {
      const data = deps.store.read();
      const pool = visiblePages(data, ctx).filter(
        (p) =>
          (input.status === 'any' || p.status === input.status) && (!input.language || p.language === input.language),
      );
      const hits = searchPages(pool, input.query, input.limit);
      const results = hits.slice(0, input.limit).map((h) => ({
        id: h.page.id,
        slug: h.page.slug,
        title: h.page.title,
        status: h.page.status,
        language: h.page.language,
        url: pageUrl(data.site, h.page),
        score: h.score,
        snippet: h.snippet,
        matched_fields: h.matched_fields,
      }));
      const text = results.length
        ? results.map((r, i) => `${i + 1}. #${r.id} ${r.title} (score ${r.score})\n   ${r.snippet}`).join('\n')
        : `no page matches "${input.query}"`;
      return { structured: { results, total: hits.length }, text };
    },
  });

  return [list, get, search];
}
