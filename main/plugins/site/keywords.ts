import { parseMarkdown } from './markdown.ts';
import type { Page } from './site-data.ts';
import { stopWordsFor } from './stop-words.ts';
import { fold, phraseRuns } from './text.ts';

/**
 * Keyword ideas mined from the site's own pages: 1-3 word phrases that do not
 * start or end with a stop word and never straddle punctuation, ranked by a
 * TF-IDF sum across pages. Phrases in a title or heading weigh more; longer
 * phrases weigh more because they are more specific search intents.
 */

export interface KeywordIdea {
  phrase: string;
  words: number;
  score: number;
  occurrences: number;
  /** pages using the phrase, most uses first */
  pages: { id: number; title: string; occurrences: number }[];
  /** pages that already have this phrase as their focus keyword */
  in_use_by: { id: number; title: string }[];
}

export interface KeywordOptions {
  /** at most this many ideas */
  limit: number;
  /** only phrases containing this word or phrase (folded match) */
  contains?: string;
  /** drop phrases some page already uses as its focus keyword (default: keep and mark them) */
  excludeInUse?: boolean;
  /** every page of the site, for "in use" focus keywords */
  allPages: readonly Page[];
}

const LENGTH_BOOST = [0, 1, 1.6, 2] as const;
const PROMINENCE_BOOST = 1.5;
const MIN_UNIGRAM_CHARS = 3;

interface Stat {
  surfaces: Map<string, number>;
  perPage: Map<number, number>;
  total: number;
  prominent: boolean;
  words: number;
}

const isNumber = (w: string) => /^\p{N}+$/u.test(w);

interface PageGrams {
  grams: Map<string, { count: number; prominent: boolean; words: number; surfaces: Map<string, number> }>;
  length: number;
}

// Pages from the store are frozen and replaced on every change, so the object is a safe cache key.
const gramCache = new WeakMap<Page, Map<string, PageGrams>>();

function pageGrams(page: Page, language: string, stop: ReadonlySet<string> | null): PageGrams {
  const cached = gramCache.get(page)?.get(language);
  if (cached) return cached;
  const parsed = parseMarkdown(page.content);
  const sources: [string, boolean][] = [
    [page.title, true],
    ...parsed.blocks.map((b): [string, boolean] => [b.text, b.type === 'heading']),
  ];
  const grams: PageGrams['grams'] = new Map();
  let length = 0;
  for (const [text, prominent] of sources) {
    for (const run of phraseRuns(text)) {
      length += run.length;
      const folded = run.map(fold);
      const skip = folded.map((w) => (stop?.has(w) ?? false) || isNumber(w));
      for (let i = 0; i < run.length; i++) {
        if (skip[i]) continue;
        for (let n = 1; n <= 3 && i + n <= run.length; n++) {
          if (skip[i + n - 1]) continue;
          if (n === 1 && (run[i] ?? '').length < MIN_UNIGRAM_CHARS) continue;
          const key = folded.slice(i, i + n).join(' ');
          const surface = run.slice(i, i + n).join(' ');
          let g = grams.get(key);
          if (!g) grams.set(key, (g = { count: 0, prominent: false, words: n, surfaces: new Map() }));
          g.count++;
          g.surfaces.set(surface, (g.surfaces.get(surface) ?? 0) + 1);
          if (prominent) g.prominent = true;
        }
      }
    }
  }
  const result = { grams, length: Math.max(1, length) };
  const perLanguage = gramCache.get(page) ?? new Map<string, PageGrams>();
  perLanguage.set(language, result);
  if (Object.isFrozen(page)) gramCache.set(page, perLanguage);
  return result;
}

export function keywordIdeas(
  pages: readonly Page[],
  language: string,
  opts: KeywordOptions,
): { ideas: KeywordIdea[]; stop_words: boolean } {
  const stop = stopWordsFor(language);
  const stats = new Map<string, Stat>();
  const lengths = new Map<number, number>();

  for (const page of pages) {
    const pg = pageGrams(page, language, stop);
    lengths.set(page.id, pg.length);
    for (const [key, g] of pg.grams) {
      let s = stats.get(key);
      if (!s)
        stats.set(key, (s = { surfaces: new Map(), perPage: new Map(), total: 0, prominent: false, words: g.words }));
      for (const [surface, c] of g.surfaces) s.surfaces.set(surface, (s.surfaces.get(surface) ?? 0) + c);
      s.perPage.set(page.id, (s.perPage.get(page.id) ?? 0) + g.count);
      s.total += g.count;
      if (g.prominent) s.prominent = true;
    }
  }

  // Drop a phrase that only ever occurs inside one longer phrase: the longer one says it better.
  // A contained phrase occurs at least as often as its container, so equal totals mean "only inside".
  const maxContainer = new Map<string, number>();
  for (const [key, s] of stats) {
    if (s.words < 2) continue;
    const parts = key.split(' ');
    for (const sub of [parts.slice(0, -1).join(' '), parts.slice(1).join(' ')]) {
      maxContainer.set(sub, Math.max(maxContainer.get(sub) ?? 0, s.total));
    }
  }
  for (const [key, s] of stats) if (maxContainer.get(key) === s.total) stats.delete(key);

  const n = pages.length;
  const focus = new Map<string, { id: number; title: string }[]>();
  for (const p of opts.allPages) {
    const k = fold(p.focus_keyword.trim()).replace(/\s+/g, ' ');
    if (k) focus.set(k, [...(focus.get(k) ?? []), { id: p.id, title: p.title }]);
  }
  const contains = opts.contains ? ` ${fold(opts.contains).trim()} ` : null;
  const titles = new Map(pages.map((p) => [p.id, p.title]));

  const ideas: KeywordIdea[] = [];
  for (const [key, s] of stats) {
    if (s.total < 2 && !s.prominent) continue;
    if (contains && !` ${key} `.includes(contains)) continue;
    const inUse = focus.get(key) ?? [];
    if (opts.excludeInUse && inUse.length) continue;
    const idf = Math.log(1 + n / s.perPage.size);
    let tf = 0;
    for (const [id, c] of s.perPage) tf += (c / (lengths.get(id) ?? 1)) * 100;
    const score = tf * idf * (LENGTH_BOOST[s.words as 1 | 2 | 3] ?? 1) * (s.prominent ? PROMINENCE_BOOST : 1);
    const phrase = [...s.surfaces].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? key;
    ideas.push({
      phrase,
      words: s.words,
      score: Math.round(score * 1000) / 1000,
      occurrences: s.total,
      pages: [...s.perPage]
        .map(([id, c]) => ({ id, title: titles.get(id) ?? '', occurrences: c }))
        .sort((a, b) => b.occurrences - a.occurrences || a.id - b.id),
      in_use_by: inUse,
    });
  }
  ideas.sort((a, b) => b.score - a.score || a.phrase.localeCompare(b.phrase));
  return { ideas: ideas.slice(0, opts.limit), stop_words: stop !== null };
}
