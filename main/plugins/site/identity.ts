import type { Tool } from '../../core/calls/tool.ts';
import type { SiteData } from './site-data.ts';

/**
 * What the gateway serves as gatehouse://site/identity: enough for an agent to orient itself. A type, not an
 * interface: it is served as a plain record (Record<string, unknown>), which an interface is not assignable to.
 */
export type SiteIdentity = {
  name: string;
  description: string;
  url: string;
  language: string;
  /** every language some page is in, the site language first */
  languages: string[];
  timezone: string;
  pages: { total: number; publish: number; draft: number };
  tools: { name: string; title: string; write: boolean }[];
  content: { format: 'markdown'; conventions: string[] };
};

export const CONTENT_CONVENTIONS: readonly string[] = [
  'Page content is Markdown (CommonMark subset): paragraphs, "#" headings, "-" or "1." lists, "> " quotes, **bold**, *italic*, `code`, fenced code blocks.',
  'Each page starts with exactly one "# " H1 heading (usually the page title); sections use "## " and "### " without skipping levels.',
  'Internal links are root-relative paths to a slug, e.g. [our coffees](/coffees/); external links are absolute https:// URLs.',
  'Slugs are lower-case letters and digits joined by hyphens and unique across the site, translations included.',
  'Pages in the site language live at /<slug>/, other languages at /<language>/<slug>/; translations are linked both ways (translations: {language: page id}).',
  'Writes (pages_create, pages_update, pages_publish, pages_delete, translate_page) are staged: they return a preview and change nothing until it is approved (the operating manual says by whom).',
  'SEO: seo_title 50-60 characters, seo_description 120-160 characters, one focus_keyword per page; seo_analyze_page checks a page.',
];

export function siteIdentity(data: SiteData, tools: readonly Tool[]): SiteIdentity {
  const langs = new Set([data.site.language, ...data.pages.map((p) => p.language)]);
  const publish = data.pages.filter((p) => p.status === 'publish').length;
  return {
    name: data.site.name,
    description: data.site.description,
    url: data.site.url,
    language: data.site.language,
    languages: [data.site.language, ...[...langs].filter((l) => l !== data.site.language).sort()],
    timezone: data.site.timezone,
    pages: { total: data.pages.length, publish, draft: data.pages.length - publish },
    tools: tools.map((t) => ({ name: t.name, title: t.title, write: t.write })),
    content: { format: 'markdown', conventions: [...CONTENT_CONVENTIONS] },
  };
}
