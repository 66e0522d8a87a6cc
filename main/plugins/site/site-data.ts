import { z } from 'zod';
import { lazySchema } from '../../contract/lazy-schema.ts';

/**
 * The local site's document: settings plus pages, kept by a DocumentStore
 * (a JSON file in the data dir). Page content is Markdown (see README.md in
 * this folder for the conventions the SEO tools rely on).
 */

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const LANGUAGE_PATTERN = /^[a-z]{2,3}(?:-[A-Z]{2})?$/;
export const TITLE_MAX = 200;
export const SLUG_MAX = 100;
export const EXCERPT_MAX = 1000;
export const SEO_TITLE_MAX = 200;
export const SEO_DESCRIPTION_MAX = 500;
export const FOCUS_KEYWORD_MAX = 100;
/** 200 KB of UTF-8. */
export const CONTENT_MAX_BYTES = 200 * 1024;

const utf8Bytes = (s: string): number => new TextEncoder().encode(s).length;

export const PageId = lazySchema(() => z.number().int().positive());
export const Slug = lazySchema(() =>
  z
    .string()
    .min(1)
    .max(SLUG_MAX)
    .regex(SLUG_PATTERN, 'a slug is lower-case letters and digits separated by single hyphens, e.g. "about-us"'),
);
export const Language = lazySchema(() =>
  z
    .string()
    .regex(
      LANGUAGE_PATTERN,
      'a language is an ISO 639 code such as "en" or "de", optionally with a region such as "pt-BR"',
    ),
);
export const PageTitle = lazySchema(() => z.string().trim().min(1, 'a title cannot be empty').max(TITLE_MAX));
export const PageContent = lazySchema(() =>
  z.string().refine((s) => utf8Bytes(s) <= CONTENT_MAX_BYTES, {
    message: `content is limited to ${CONTENT_MAX_BYTES / 1024} KB of UTF-8`,
  }),
);
export const PageStatus = lazySchema(() => z.enum(['draft', 'publish']));
export type PageStatus = z.infer<typeof PageStatus>;

export const Page = lazySchema(() =>
  z.object({
    id: PageId,
    slug: Slug,
    title: PageTitle,
    /** Markdown */
    content: PageContent,
    excerpt: z.string().max(EXCERPT_MAX),
    status: PageStatus,
    seo_title: z.string().max(SEO_TITLE_MAX),
    seo_description: z.string().max(SEO_DESCRIPTION_MAX),
    focus_keyword: z.string().max(FOCUS_KEYWORD_MAX),
    language: Language,
    /** language -> id of the page holding that translation (never the page's own language) */
    translations: z.record(z.string(), PageId),
    /** user id of the author */
    author_id: z.string().min(1),
    created: z.string(),
    modified: z.string(),
    /** bumped on every change; staged writes are planned against it */
    version: z.number().int().positive(),
  }),
);
export type Page = z.infer<typeof Page>;

export const SiteSettings = lazySchema(() =>
  z.object({
    name: z.string().min(1).max(200),
    description: z.string().max(500),
    url: z.url(),
    language: Language,
    timezone: z.string().min(1).max(100),
  }),
);
export type SiteSettings = z.infer<typeof SiteSettings>;

/** What an apply left behind for crash recovery: the staged write's result, kept with the change itself. */
export const AppliedMarker = lazySchema(() =>
  z.object({
    /** ms since the epoch, never earlier than the marker before it */
    at: z.number(),
    text: z.string(),
    structured: z.record(z.string(), z.unknown()),
    /** what the apply made (a creation's page), so a recovered confirm audits the same target */
    target: z.string().max(128).optional(),
  }),
);
export type AppliedMarker = z.infer<typeof AppliedMarker>;

export const SiteData = lazySchema(() =>
  z.object({
    schema_version: z.literal(1).default(1),
    site: SiteSettings,
    pages: z.array(Page),
    next_id: z.number().int().positive(),
    /** set when the sample pages were written (or data was lost), so the site is never seeded again */
    seeded_at: z.string().nullable().default(null),
    /** staged id -> marker of the writes applied lately, oldest first (applied-log.ts) */
    applied: z.record(z.string().max(64), AppliedMarker).default({}),
    /** the newest `at` of a marker pruned (or lost); an intent older than this cannot be answered */
    applied_horizon: z.number().nullable().default(null),
  }),
);
export type SiteData = z.infer<typeof SiteData>;

export const DEFAULT_SITE_SETTINGS: SiteSettings = {
  name: 'My site',
  description: '',
  url: 'http://localhost/',
  language: 'en',
  timezone: 'UTC',
};

export function emptySiteData(): SiteData {
  return {
    schema_version: 1,
    site: { ...DEFAULT_SITE_SETTINGS },
    pages: [],
    next_id: 1,
    seeded_at: null,
    applied: {},
    applied_horizon: null,
  };
}
