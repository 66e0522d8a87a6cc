import { parseMarkdown } from './markdown.ts';
import type { Page } from './site-data.ts';
import { stopWordsFor } from './stop-words.ts';
import { countPhrase, terms } from './text.ts';

/**
 * Full-text search over pages: BM25 over a weighted bag of fields (a word in
 * the title counts more than one in the body), prefix matches for words of
 * four letters or more ("roast" finds "roasting"), a bonus for the whole
 * query as a phrase, and a penalty for leaving query words unmatched.
 */

export interface SearchHit {
  page: Page;
  score: number;
  snippet: string;
  matched_fields: string[];
}

const K1 = 1.2;
const B = 0.75;
const PREFIX_WEIGHT = 0.6;
const MIN_PREFIX = 4;

interface Indexed {
  page: Page;
  fields: { name: string; weight: number; terms: string[] }[];
  counts: Map<string, number>;
  length: number;
  blocks: string[];
}

// Pages from the store are frozen and replaced on every change, so the object is a safe cache key.
const indexCache = new WeakMap<Page, Indexed>();

function index(page: Page): Indexed {
  const cached = indexCache.get(page);
  if (cached) return cached;
  const built = buildIndex(page);
  if (Object.isFrozen(page)) indexCache.set(page, built);
  return built;
}

function buildIndex(page: Page): Indexed {
  const parsed = parseMarkdown(page.content);
  const fields = [
    { name: 'title', weight: 3, terms: terms(page.title) },
    { name: 'slug', weight: 2, terms: page.slug.split('-') },
    { name: 'seo', weight: 2, terms: terms(`${page.seo_title} ${page.focus_keyword}`) },
    { name: 'excerpt', weight: 1.5, terms: terms(`${page.excerpt} ${page.seo_description}`) },
    { name: 'content', weight: 1, terms: terms(parsed.plainText) },
  ];
  const counts = new Map<string, number>();
  for (const f of fields) for (const t of f.terms) counts.set(t, (counts.get(t) ?? 0) + f.weight);
  const length = fields.reduce((n, f) => n + f.terms.length, 0);
  return { page, fields, counts, length, blocks: parsed.blocks.map((b) => b.text) };
}

/** Weighted frequency of a query term in a page, prefix matches counted at a discount. */
function frequency(doc: Indexed, q: string): number {
  let tf = doc.counts.get(q) ?? 0;
  if (q.length >= MIN_PREFIX) for (const [t, c] of doc.counts) if (t !== q && t.startsWith(q)) tf += c * PREFIX_WEIGHT;
  return tf;
}

function snippet(doc: Indexed, qTerms: string[], max = 200): string {
  const matches = (text: string) =>
    new Set(terms(text).filter((t) => qTerms.some((q) => t === q || (q.length >= MIN_PREFIX && t.startsWith(q))))).size;
  let best = doc.blocks[0] ?? doc.page.excerpt;
  let bestScore = 0;
  for (const b of doc.blocks) {
    const m = matches(b);
    if (m > bestScore) [best, bestScore] = [b, m];
  }
  if (best.length <= max) return best;
  const ws = best.split(' ');
  const first = Math.max(
    0,
    ws.findIndex((w) => matches(w) > 0),
  );
  let start = Math.max(0, first - 8);
  let out = ws.slice(start, start + 1).join(' ');
  let end = start + 1;
  while (end < ws.length && out.length + (ws[end]?.length ?? 0) + 1 <= max - 2) out += ` ${ws[end++]}`;
  while (start > 0 && out.length + (ws[start - 1]?.length ?? 0) + 1 <= max - 2) out = `${ws[--start]} ${out}`;
  return `${start > 0 ? '…' : ''}${out}${end < ws.length ? '…' : ''}`;
}

/** Every matching page, best first; snippets are made for the first `snippets` hits only (the rest get ''). */
export function searchPages(pages: readonly Page[], query: string, snippets = Infinity): SearchHit[] {
  const all = [...new Set(terms(query))];
  const meaningful = all.filter((t) => !(stopWordsFor('en')?.has(t) || stopWordsFor('de')?.has(t)));
  const qTerms = meaningful.length ? meaningful : all;
  if (!qTerms.length || !pages.length) return [];

  const docs = pages.map(index);
  const avgLen = docs.reduce((n, d) => n + d.length, 0) / docs.length;
  const idf = new Map(
    qTerms.map((q) => {
      const df = docs.filter((d) => frequency(d, q) > 0).length;
      return [q, Math.log(1 + (docs.length - df + 0.5) / (df + 0.5))];
    }),
  );
  const phrase = terms(query);

  const hits: SearchHit[] = [];
  for (const d of docs) {
    let score = 0;
    let matched = 0;
    for (const q of qTerms) {
      const tf = frequency(d, q);
      if (!tf) continue;
      matched++;
      score += (idf.get(q) ?? 0) * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * d.length) / avgLen)));
    }
    if (!score) continue;
    if (phrase.length > 1) {
      if (countPhrase(d.fields[0]?.terms ?? [], phrase)) score *= 1.5;
      else if (d.fields.some((f) => countPhrase(f.terms, phrase))) score *= 1.25;
    }
    score *= 0.5 + (0.5 * matched) / qTerms.length;
    const matchedFields = d.fields
      .filter((f) => f.terms.some((t) => qTerms.some((q) => t === q || (q.length >= MIN_PREFIX && t.startsWith(q)))))
      .map((f) => f.name);
    hits.push({ page: d.page, score: Math.round(score * 1000) / 1000, snippet: '', matched_fields: matchedFields });
  }
  hits.sort((a, b) => b.score - a.score || a.page.id - b.page.id);
  hits.slice(0, snippets).forEach((h) => {
    h.snippet = snippet(index(h.page), qTerms);
  });
  return hits;
}
