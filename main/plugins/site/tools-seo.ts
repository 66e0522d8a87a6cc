import { z } from 'zod';
import { defineTool, type Tool } from '../../core/calls/tool.ts';
import { keywordIdeas } from './keywords.ts';
import { findVisiblePage, visiblePages, pageRefTarget } from './page-access.ts';
import { analyzePage } from './seo-analyze.ts';
import { PLUGIN_ID, type SiteDeps } from './site-deps.ts';
import { f, hasOneRef, ONE_REF, KeywordIdeaOut, PageRef, SeoReportOut } from './tool-schemas.ts';
import { READ_ANNOTATIONS } from './tools-pages-read.ts';
import { lazySchema } from '../../contract/lazy-schema.ts';

const AnalyzeInput = lazySchema(() =>
  z
    .object({
      ...PageRef,
      focus_keyword: f.focus_keyword
        .optional()
        .describe("Check against this keyword instead of the page's own focus keyword."),
    })
    .refine(hasOneRef, ONE_REF),
);

const IdeasInput = lazySchema(() =>
  z.object({
    language: f.language.optional().describe('Mine pages in this language; defaults to the site language.'),
    limit: z.number().int().min(1).max(100).default(25).describe('At most this many ideas, best first.'),
    contains: z.string().trim().min(1).max(100).optional().describe('Only phrases containing this word or phrase.'),
    exclude_in_use: z
      .boolean()
      .default(false)
      .describe(
        "Leave out phrases that are already some page's focus keyword (by default they are listed and marked in in_use_by).",
      ),
  }),
);

const IdeasOutput = lazySchema(() =>
  z.object({
    language: z.string(),
    pages_analyzed: z.number().int().describe('Published pages in that language.'),
    stop_words: z
      .boolean()
      .describe(
        'Whether a stop-word list exists for the language (English, German); without one, common words may appear.',
      ),
    ideas: z.array(KeywordIdeaOut),
  }),
);

export function seoTools(deps: SiteDeps): Tool[] {
  const analyze = defineTool({
    name: 'seo_analyze_page',
    title: 'Analyze a page for SEO',
    description:
      'Check one page on-page SEO: SEO title and meta description length, focus keyword in title, first paragraph, subheadings and slug, keyword density, heading outline, internal/external links, readability and length. Every finding comes with a concrete fix. Deterministic; changes nothing.',
    input: AnalyzeInput,
    target: pageRefTarget,
    output: SeoReportOut,
    capability: 'read',
    feature: 'seo.analyze',
    plugin: PLUGIN_ID,
    write: false,
    annotations: READ_ANNOTATIONS,
    async run(input, ctx) {
      const data = deps.store.read();
      const page = findVisiblePage(data, ctx, input);
      const report = analyzePage(page, {
        siteUrl: data.site.url,
        siteName: data.site.name,
        slugs: new Map(data.pages.map((p) => [p.slug, p.status])),
        ...(input.focus_keyword !== undefined ? { focusKeyword: input.focus_keyword } : {}),
      });
      const todo = report.findings.filter((x) => x.severity !== 'good');
      const text = [
        `SEO score ${report.score}/100 for #${page.id} '${page.title}'${report.focus_keyword ? ` (focus keyword "${report.focus_keyword}")` : ''}`,
        ...todo.map((x) => `- [${x.severity}] ${x.message}\n  fix: ${x.fix}`),
        todo.length ? '' : 'Every check passes.',
      ]
        .join('\n')
        .trim();
      return { structured: { ...report }, text };
    },
  });

  const ideas = defineTool({
    name: 'seo_keyword_ideas',
    title: 'Keyword ideas from the site',
    description:
      "Suggest keywords and 2-3 word phrases mined from the site's own published pages, ranked by TF-IDF, with the pages that use each and whether a page already targets it as its focus keyword.",
    input: IdeasInput,
    output: IdeasOutput,
    capability: 'read',
    feature: 'seo.keywords',
    plugin: PLUGIN_ID,
    write: false,
    annotations: READ_ANNOTATIONS,
    async run(input, ctx) {
      const data = deps.store.read();
      const language = input.language ?? data.site.language;
      const pages = data.pages.filter((p) => p.status === 'publish' && p.language === language);
      const result = keywordIdeas(pages, language, {
        limit: input.limit,
        allPages: visiblePages(data, ctx).filter((p) => p.language === language),
        excludeInUse: input.exclude_in_use,
        ...(input.contains ? { contains: input.contains } : {}),
      });
      const structured = { language, pages_analyzed: pages.length, stop_words: result.stop_words, ideas: result.ideas };
      const text = result.ideas.length
        ? result.ideas
            .map(
              (i, n) =>
                `${n + 1}. ${i.phrase} (score ${i.score}; on ${i.pages.map((p) => `#${p.id}`).join(', ')})${i.in_use_by.length ? ` [in use by ${i.in_use_by.map((p) => `#${p.id}`).join(', ')}]` : ''}`,
            )
            .join('\n')
        : `no keyword ideas: no published ${language} pages with enough text`;
      return { structured, text };
    },
  });

  return [analyze, ideas];
}
