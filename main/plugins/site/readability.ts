import { words } from './text.ts';

/**
 * Reading ease on the Flesch scale (0 hard .. 100 easy). English uses
 * Flesch's formula; German uses Amstad's adaptation of it. Syllables are
 * counted with a vowel-group heuristic, good to a few points on real text.
 * Other languages get `available: false`: no formula we trust is applied.
 */

export interface Readability {
  available: boolean;
  /** the formula used, e.g. "flesch-reading-ease" */
  method: 'flesch-reading-ease' | 'flesch-amstad' | null;
  score: number | null;
  /** plain-language band of the score */
  band: 'very easy' | 'easy' | 'fairly easy' | 'standard' | 'fairly difficult' | 'difficult' | 'very difficult' | null;
  sentences: number;
  words: number;
  avg_sentence_words: number;
  avg_word_syllables: number;
  /** why no score, when unavailable */
  reason: string | null;
}

export const MIN_WORDS_FOR_READABILITY = 30;

export function syllablesEn(word: string): number {
  let w = word.toLowerCase().replace(/[^a-z]/g, '');
  if (!w) return 0;
  if (w.length <= 3) return 1;
  w = w.replace(/(?:[^laeiouy]es|[^laeiouy]ed|[^laeiouy]e)$/, (m) => m.slice(0, 1)).replace(/^y/, '');
  const groups = w.match(/[aeiouy]+/g);
  return Math.max(1, groups?.length ?? 0);
}

export function syllablesDe(word: string): number {
  const w = word.toLowerCase().replace(/[^a-zäöüß]/g, '');
  if (!w) return 0;
  // diphthongs and long vowels (ei, ie, au, eu, äu, aa, ee, oo) are one group already
  const groups = w.match(/[aeiouyäöü]+/g);
  return Math.max(1, groups?.length ?? 0);
}

/** Sentences of prose: each block is at least one sentence, split on . ! ? */
export function sentences(bodyText: string): string[] {
  return bodyText
    .split('\n')
    .flatMap((block) => block.split(/(?<=[.!?])\s+(?=[\p{Lu}\p{N}"“„'(])/u))
    .map((s) => s.trim())
    .filter((s) => words(s).length > 0);
}

function band(score: number): NonNullable<Readability['band']> {
  if (score >= 90) return 'very easy';
  if (score >= 80) return 'easy';
  if (score >= 70) return 'fairly easy';
  if (score >= 60) return 'standard';
  if (score >= 50) return 'fairly difficult';
  if (score >= 30) return 'difficult';
  return 'very difficult';
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export function readability(bodyText: string, language: string): Readability {
  const sents = sentences(bodyText);
  const ws = sents.flatMap((s) => words(s));
  const base = {
    sentences: sents.length,
    words: ws.length,
    avg_sentence_words: sents.length ? round1(ws.length / sents.length) : 0,
  };
  const lang = language.slice(0, 2).toLowerCase();
  const counter = lang === 'en' ? syllablesEn : lang === 'de' ? syllablesDe : null;
  const unavailable = (reason: string): Readability => ({
    available: false,
    method: null,
    score: null,
    band: null,
    avg_word_syllables: 0,
    reason,
    ...base,
  });
  if (!counter) return unavailable(`no readability formula for language "${language}" (English and German only)`);
  if (ws.length < MIN_WORDS_FOR_READABILITY)
    return unavailable(`too little text to measure (${ws.length} words; at least ${MIN_WORDS_FOR_READABILITY} needed)`);

  // hyphenated compounds count every part's syllables
  const syllables = ws.reduce((sum, w) => sum + w.split(/[-'’]/).reduce((s, part) => s + counter(part), 0), 0);
  const asl = ws.length / sents.length;
  const asw = syllables / ws.length;
  const raw = lang === 'en' ? 206.835 - 1.015 * asl - 84.6 * asw : 180 - asl - 58.5 * asw;
  const score = round1(Math.min(100, Math.max(0, raw)));
  return {
    available: true,
    method: lang === 'en' ? 'flesch-reading-ease' : 'flesch-amstad',
    score,
    band: band(score),
    avg_word_syllables: Math.round(asw * 100) / 100,
    reason: null,
    ...base,
  };
}
