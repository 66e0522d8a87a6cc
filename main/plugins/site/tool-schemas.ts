import { z } from 'zod';
import {
  CONTENT_MAX_BYTES,
  EXCERPT_MAX,
  FOCUS_KEYWORD_MAX,
  Language,
  Page,
  PageContent,
  PageId,
  PageStatus,
  PageTitle,
  SEO_DESCRIPTION_MAX,
  SEO_TITLE_MAX,
  Slug,
} from './site-data.ts';
import { lazySchema } from '../../contract/lazy-schema.ts';

/**
 * Field schemas shared by the tools' inputs and outputs. Every field has a
 * description: they become the JSON Schema MCP clients read.
 */

export const f = {
  id: lazySchema(() => PageId.describe('Page id, as returned by pages_list or pages_search.')),
  slug: lazySchema(() =>
    Slug.describe(
      'URL slug: lower-case letters and digits separated by hyphens, e.g. "pour-over-guide"; unique across the site.',
    ),
  ),
  title: lazySchema(() => PageTitle.describe('Page title, 1-200 characters.')),
  content: lazySchema(() =>
    PageContent.describe(
      `Page body in Markdown (at most ${CONTENT_MAX_BYTES / 1024} KB): start with one "# " heading, use "## "/"### " for sections, links as [text](/slug/).`,
    ),
  ),
  excerpt: lazySchema(() =>
    z.string().max(EXCERPT_MAX).describe(`Short summary shown in listings, at most ${EXCERPT_MAX} characters.`),
  ),
  seo_title: lazySchema(() =>
    z
      .string()
      .max(SEO_TITLE_MAX)
      .describe('Title for search results (ideally 50-60 characters); empty means the page title is used.'),
  ),
  seo_description: lazySchema(() =>
    z.string().max(SEO_DESCRIPTION_MAX).describe('Meta description for search results (ideally 120-160 characters).'),
  ),
  focus_keyword: lazySchema(() =>
    z.string().max(FOCUS_KEYWORD_MAX).describe('The search phrase this page should rank for, e.g. "pour-over coffee".'),
  ),
  language: lazySchema(() => Language.describe('Language code such as "en" or "de".')),
  status: lazySchema(() => PageStatus.describe('"draft" (not public) or "publish" (live).')),
  if_version: lazySchema(() =>
    z
      .number()
      .int()
      .positive()
      .describe(
        'Optional: the version you last read; the change is refused with stale_preview if the page has changed since.',
      ),
  ),
};

/** Which page a read tool means: by id or by slug, exactly one of them. */
export const PageRef = {
  id: lazySchema(() => f.id.optional().describe('Page id. Give either id or slug.')),
  slug: lazySchema(() => f.slug.optional().describe('Page slug, e.g. "about-us". Give either id or slug.')),
};
export const hasOneRef = (v: { id?: number | undefined; slug?: string | undefined }) =>
  (v.id === undefined) !== (v.slug === undefined);
export const ONE_REF = { message: 'give either id or slug (exactly one)', path: ['id'] };

/** A page as tools return it: the stored page plus its public URL. */
export const PageOut = lazySchema(() => Page.extend({ url: z.string().describe('Public address of the page.') }));
export type PageOut = z.infer<typeof PageOut>;

export const PageSummary = lazySchema(() =>
  z.object({
    id: PageId,
    slug: z.string(),
    title: z.string(),
    status: PageStatus,
    language: z.string(),
    excerpt: z.string(),
    focus_keyword: z.string(),
    author_id: z.string(),
    modified: z.string(),
    version: z.number().int(),
    translations: z.record(z.string(), PageId).describe('language -> page id of each translation'),
    url: z.string(),
  }),
);
export type PageSummary = z.infer<typeof PageSummary>;

export const FindingOut = lazySchema(() =>
  z.object({
    id: z.string().describe('Stable id of the check, e.g. "seo_title_length".'),
    severity: z.enum(['good', 'improve', 'problem']),
    message: z.string(),
    fix: z.string().nullable().describe('A concrete instruction; null when nothing needs to change.'),
  }),
);

const LinkOut = lazySchema(() =>
  z.object({
    text: z.string(),
    href: z.string(),
    kind: z.enum(['internal', 'external', 'other']),
    slug: z.string().nullable(),
  }),
);

export const SeoReportOut = lazySchema(() =>
  z.object({
    page_id: PageId,
    score: z.number().int().min(0).max(100).describe('0-100: good findings count 1, improve 0.5, problem 0.'),
    focus_keyword: z.string(),
    findings: z.array(FindingOut),
    outline: z.array(z.object({ level: z.number().int(), text: z.string(), line: z.number().int() })),
    links: z.object({ internal: z.array(LinkOut), external: z.array(LinkOut) }),
    readability: z.object({
      available: z.boolean(),
      method: z.enum(['flesch-reading-ease', 'flesch-amstad']).nullable(),
      score: z.number().nullable(),
      band: z.string().nullable(),
      sentences: z.number().int(),
      words: z.number().int(),
      avg_sentence_words: z.number(),
      avg_word_syllables: z.number(),
      reason: z.string().nullable(),
    }),
    metrics: z.object({
      word_count: z.number().int(),
      seo_title: z.string(),
      seo_title_length: z.number().int(),
      meta_description_length: z.number().int(),
      keyword_occurrences: z.number().int(),
      keyword_density: z.number().describe('percent of words'),
    }),
  }),
);

export const KeywordIdeaOut = lazySchema(() =>
  z.object({
    phrase: z.string(),
    words: z.number().int().min(1).max(3),
    score: z.number(),
    occurrences: z.number().int(),
    pages: z.array(z.object({ id: PageId, title: z.string(), occurrences: z.number().int() })),
    in_use_by: z
      .array(z.object({ id: PageId, title: z.string() }))
      .describe('Pages that already use this phrase as their focus keyword.'),
  }),
);
