import { parseMarkdown } from './markdown.ts';
import { readability, type Readability } from './readability.ts';
import { classifyLink, type ClassifiedLink } from './seo-links.ts';
import type { Page } from './site-data.ts';
import { stopWordsFor } from './stop-words.ts';
import { containsPhrase, countPhrase, slugify, terms, truncate } from './text.ts';

/**
 * A deterministic on-page SEO check: the same page always gets the same
 * findings. Every finding that is not "good" carries a fix a person (or an
 * agent using pages_update) can act on directly.
 */

export type Severity = 'good' | 'improve' | 'problem';
export interface Finding {
  id: string;
  severity: Severity;
  message: string;
  /** what to change; null when nothing needs to change */
  fix: string | null;
}

export interface SeoReport {
  page_id: number;
  score: number;
  focus_keyword: string;
  findings: Finding[];
  outline: { level: number; text: string; line: number }[];
  links: { internal: ClassifiedLink[]; external: ClassifiedLink[] };
  readability: Readability;
  metrics: {
    word_count: number;
    seo_title: string;
    seo_title_length: number;
    meta_description_length: number;
    keyword_occurrences: number;
    /** percent of words */
    keyword_density: number;
  };
}

export const SEO_TITLE_IDEAL = { min: 50, max: 60 } as const;
export const META_DESCRIPTION_IDEAL = { min: 120, max: 160 } as const;
export const DENSITY_RANGE = { min: 0.5, max: 3 } as const;
export const MIN_WORDS = 300;

export interface AnalyzeOptions {
  siteUrl: string;
  siteName: string;
  /** slug -> status of every page, to find links to missing or unpublished pages */
  slugs: ReadonlyMap<string, Page['status']>;
  /** overrides the page's own focus keyword */
  focusKeyword?: string;
}

const SCORE: Record<Severity, number> = { good: 1, improve: 0.5, problem: 0 };
const f = (id: string, severity: Severity, message: string, fix: string | null = null): Finding => ({
  id,
  severity,
  message,
  fix,
});

function titleFinding(title: string, usingPageTitle: boolean, siteName: string): Finding {
  const len = title.length;
  const source = usingPageTitle ? 'seo_title is empty, so the page title is used; it has' : 'The SEO title has';
  const { min, max } = SEO_TITLE_IDEAL;
  if (len >= min && len <= max)
    return f('seo_title_length', 'good', `${source} ${len} characters, within ${min}-${max}.`);
  const severity: Severity = len < min - 20 || len > max + 10 ? 'problem' : 'improve';
  if (len < min) {
    const suffix = ` | ${siteName}`;
    const example =
      !title.toLowerCase().includes(siteName.toLowerCase()) && title.length + suffix.length <= max
        ? ` For example: "${title}${suffix}".`
        : '';
    return f(
      'seo_title_length',
      severity,
      `${source} ${len} characters, fewer than ${min}.`,
      `Set seo_title to ${min}-${max} characters by adding ${min - len}-${max - len} characters, e.g. a benefit or the site name.${example}`,
    );
  }
  return f(
    'seo_title_length',
    severity,
    `${source} ${len} characters, more than ${max}: search results will cut it off.`,
    `Set seo_title to at most ${max} characters: remove ${len - max} or more characters, keeping the focus keyword near the start. Cut here: "${truncate(title, max)}".`,
  );
}

function descriptionFinding(desc: string, excerpt: string): Finding {
  const len = desc.length;
  const { min, max } = META_DESCRIPTION_IDEAL;
  if (!len) {
    const hint = excerpt ? ` The excerpt could be a starting point: "${truncate(excerpt, max)}".` : '';
    return f(
      'meta_description_length',
      'problem',
      'The page has no meta description; search engines will pick a random snippet.',
      `Write a seo_description of ${min}-${max} characters that states what the page offers and includes the focus keyword.${hint}`,
    );
  }
  if (len >= min && len <= max)
    return f(
      'meta_description_length',
      'good',
      `The meta description (${len} characters) is within ${min}-${max} characters.`,
    );
  const severity: Severity = len < min - 50 || len > max + 40 ? 'problem' : 'improve';
  return len < min
    ? f(
        'meta_description_length',
        severity,
        `The meta description (${len} characters) is shorter than ${min} characters.`,
        `Extend seo_description by ${min - len}-${max - len} characters: add a concrete detail or a call to action.`,
      )
    : f(
        'meta_description_length',
        severity,
        `The meta description (${len} characters) is longer than ${max} characters and will be truncated.`,
        `Shorten seo_description by at least ${len - max} characters; it would be cut at "${truncate(desc, max)}".`,
      );
}

function outlineFindings(outline: SeoReport['outline']): Finding[] {
  const out: Finding[] = [];
  const h1s = outline.filter((h) => h.level === 1);
  if (h1s.length === 0)
    out.push(
      f(
        'h1',
        'problem',
        'The content has no H1 heading.',
        'Start the content with one H1 line ("# " followed by the page topic, usually the title).',
      ),
    );
  else if (h1s.length > 1)
    out.push(
      f(
        'h1',
        'problem',
        `The content has ${h1s.length} H1 headings (lines ${h1s.map((h) => h.line).join(', ')}).`,
        'Keep one "# " heading at the top and turn the others into "## " section headings.',
      ),
    );
  else out.push(f('h1', 'good', 'The content has exactly one H1 heading.'));

  const skips: string[] = [];
  let prev = 0;
  for (const h of outline) {
    if (prev && h.level > prev + 1) skips.push(`line ${h.line}: H${prev} -> H${h.level} ("${truncate(h.text, 40)}")`);
    prev = h.level;
  }
  if (skips.length)
    out.push(
      f(
        'heading_levels',
        'improve',
        `Heading levels are skipped: ${skips.join('; ')}.`,
        'Make each heading at most one level deeper than the one before it (e.g. an H2 before any H3).',
      ),
    );
  else if (outline.length) out.push(f('heading_levels', 'good', 'Heading levels follow each other without gaps.'));
  return out;
}

function keywordFindings(
  kw: string,
  page: Page,
  seoTitle: string,
  firstParagraph: string,
  outline: SeoReport['outline'],
  contentTerms: string[],
  density: number,
  occurrences: number,
): Finding[] {
  const out: Finding[] = [];
  const has = (text: string) => containsPhrase(text, kw);
  out.push(
    has(seoTitle)
      ? f('keyword_in_seo_title', 'good', `The SEO title contains the focus keyword "${kw}".`)
      : f(
          'keyword_in_seo_title',
          'problem',
          `The SEO title does not contain the focus keyword "${kw}".`,
          `Rewrite seo_title so it contains "${kw}", ideally near the start.`,
        ),
  );
  out.push(
    has(firstParagraph)
      ? f('keyword_in_first_paragraph', 'good', 'The first paragraph mentions the focus keyword.')
      : f(
          'keyword_in_first_paragraph',
          'improve',
          'The first paragraph does not mention the focus keyword.',
          `Mention "${kw}" in the first paragraph so readers and search engines see the topic at once.`,
        ),
  );
  const sub = outline.filter((h) => h.level === 2 || h.level === 3);
  out.push(
    sub.some((h) => has(h.text))
      ? f('keyword_in_subheading', 'good', 'An H2 or H3 heading contains the focus keyword.')
      : f(
          'keyword_in_subheading',
          'improve',
          'No H2 or H3 heading contains the focus keyword.',
          sub.length
            ? `Work "${kw}" into one "## " or "### " heading, e.g. "${sub[0]?.text}".`
            : `Add a "## " section heading that contains "${kw}".`,
        ),
  );
  const stop = stopWordsFor(page.language) ?? new Set<string>();
  const slugParts = new Set(page.slug.split('-'));
  const kwParts = kw
    .split(/\s+/)
    .filter((w) => !stop.has(terms(w)[0] ?? ''))
    .map((w) => slugify(w))
    .filter(Boolean);
  const missing = kwParts.filter((p) => !p.split('-').every((x) => slugParts.has(x)));
  out.push(
    !missing.length && kwParts.length
      ? f('keyword_in_slug', 'good', `The slug "${page.slug}" contains the focus keyword.`)
      : f(
          'keyword_in_slug',
          'improve',
          `The slug "${page.slug}" does not contain ${missing.length ? `"${missing.join('", "')}"` : 'the focus keyword'}.`,
          `Change the slug to one that contains the keyword, e.g. "${slugify(kw)}" (and update links to /${page.slug}/).`,
        ),
  );
  const { min, max } = DENSITY_RANGE;
  const pct = `${density.toFixed(2)}%`;
  if (!contentTerms.length)
    out.push(
      f(
        'keyword_density',
        'problem',
        'The page has no text to measure keyword density on.',
        `Write body text that uses "${kw}" naturally.`,
      ),
    );
  else if (density < min)
    out.push(
      f(
        'keyword_density',
        'improve',
        `The focus keyword appears ${occurrences} time(s) in ${contentTerms.length} words (${pct}), below ${min}%.`,
        `Use "${kw}" about ${Math.max(1, Math.ceil((contentTerms.length * min) / 100) - occurrences)} more time(s) where it reads naturally.`,
      ),
    );
  else if (density > max)
    out.push(
      f(
        'keyword_density',
        'problem',
        `The focus keyword appears ${occurrences} times in ${contentTerms.length} words (${pct}), above ${max}%: this reads as keyword stuffing.`,
        `Replace about ${occurrences - Math.floor((contentTerms.length * max) / 100)} occurrence(s) of "${kw}" with synonyms or pronouns.`,
      ),
    );
  else
    out.push(
      f(
        'keyword_density',
        'good',
        `Keyword density is ${pct} (${occurrences} of ${contentTerms.length} words), within ${min}-${max}%.`,
      ),
    );
  return out;
}

function linkFindings(
  internal: ClassifiedLink[],
  external: ClassifiedLink[],
  slugs: AnalyzeOptions['slugs'],
): Finding[] {
  const out: Finding[] = [];
  out.push(
    internal.length
      ? f('internal_links', 'good', `The page links to ${internal.length} internal page(s).`)
      : f(
          'internal_links',
          'improve',
          'The page has no internal links.',
          'Add at least one link to a related page of this site, e.g. [related topic](/slug/); pages_search finds candidates.',
        ),
  );
  const missing = internal.filter((l) => l.slug && !slugs.has(l.slug)).map((l) => l.href);
  const drafts = internal.filter((l) => l.slug && slugs.get(l.slug) === 'draft').map((l) => l.href);
  if (missing.length)
    out.push(
      f(
        'broken_internal_links',
        'problem',
        `Internal link(s) point to pages that do not exist: ${missing.join(', ')}.`,
        'Fix or remove these links; pages_list shows the existing slugs.',
      ),
    );
  if (drafts.length)
    out.push(
      f(
        'links_to_drafts',
        'improve',
        `Internal link(s) point to unpublished drafts: ${drafts.join(', ')}.`,
        'Publish the linked pages before this one, or remove the links until they are live.',
      ),
    );
  out.push(
    external.length
      ? f('external_links', 'good', `The page links to ${external.length} external source(s).`)
      : f(
          'external_links',
          'improve',
          'The page has no external links.',
          'Where it helps the reader, link to one authoritative outside source that backs up a claim.',
        ),
  );
  return out;
}

function readabilityFinding(r: Readability): Finding | null {
  if (!r.available || r.score === null) return null;
  const what = `Reading ease is ${r.score} (${r.band}; ${r.method}), with ${r.avg_sentence_words} words per sentence on average.`;
  if (r.score >= 60) return f('readability', 'good', what);
  const longSentences = r.avg_sentence_words > 20;
  const longWords = r.avg_word_syllables > (r.method === 'flesch-amstad' ? 1.7 : 1.5);
  const advice = [
    longSentences || !longWords
      ? `split long sentences (aim for under 20 words on average; now ${r.avg_sentence_words})`
      : null,
    longWords || !longSentences
      ? `replace long words with shorter, everyday ones (now ${r.avg_word_syllables} syllables per word)`
      : null,
  ]
    .filter(Boolean)
    .join(' and ');
  return f('readability', r.score >= 30 ? 'improve' : 'problem', what, `To reach 60 or more, ${advice}.`);
}

export function analyzePage(page: Page, opts: AnalyzeOptions): SeoReport {
  const parsed = parseMarkdown(page.content);
  const usingPageTitle = !page.seo_title.trim();
  const seoTitle = usingPageTitle ? page.title : page.seo_title.trim();
  const kw = (opts.focusKeyword ?? page.focus_keyword).trim();
  const contentTerms = terms(parsed.plainText);
  const occurrences = kw ? countPhrase(contentTerms, terms(kw)) : 0;
  const density = contentTerms.length ? (occurrences / contentTerms.length) * 100 : 0;
  const outline = parsed.headings;
  const classified = parsed.links.map((l) => classifyLink(l, opts.siteUrl));
  const internal = classified.filter((l) => l.kind === 'internal');
  const external = classified.filter((l) => l.kind === 'external');
  const read = readability(parsed.bodyText, page.language);
  const wordCount = contentTerms.length;

  const findings: Finding[] = [
    titleFinding(seoTitle, usingPageTitle, opts.siteName),
    descriptionFinding(page.seo_description.trim(), page.excerpt),
  ];
  if (kw)
    findings.push(
      ...keywordFindings(kw, page, seoTitle, parsed.firstParagraph, outline, contentTerms, density, occurrences),
    );
  else
    findings.push(
      f(
        'focus_keyword',
        'improve',
        'No focus keyword is set, so keyword placement cannot be checked.',
        'Choose the search phrase this page should rank for (seo_keyword_ideas suggests some) and set it as focus_keyword.',
      ),
    );
  findings.push(...outlineFindings(outline), ...linkFindings(internal, external, opts.slugs));
  const r = readabilityFinding(read);
  if (r) findings.push(r);
  if (wordCount < MIN_WORDS)
    findings.push(
      f(
        'content_length',
        wordCount < 100 ? 'problem' : 'improve',
        `The page has ${wordCount} words.`,
        `Expand the content to at least ${MIN_WORDS} words (${MIN_WORDS - wordCount} more) with useful detail on the topic.`,
      ),
    );
  else findings.push(f('content_length', 'good', `The page has ${wordCount} words.`));

  const score = Math.round((findings.reduce((s, x) => s + SCORE[x.severity], 0) / findings.length) * 100);
  return {
    page_id: page.id,
    score,
    focus_keyword: kw,
    findings,
    outline,
    links: { internal, external },
    readability: read,
    metrics: {
      word_count: wordCount,
      seo_title: seoTitle,
      seo_title_length: seoTitle.length,
      meta_description_length: page.seo_description.trim().length,
      keyword_occurrences: occurrences,
      keyword_density: Math.round(density * 100) / 100,
    },
  };
}
