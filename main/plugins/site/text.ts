/**
 * Word handling shared by search, the SEO analyzer and keyword mining.
 * "Folding" makes matching forgiving about case and accents ("Über" matches
 * "uber"); it is only used for comparing, never shown.
 */

export function fold(s: string): string {
  return s.toLowerCase().replace(/ß/g, 'ss').normalize('NFKD').replace(/\p{M}/gu, '');
}

/** Folded terms for matching: apostrophes dropped, hyphens split ("pour-over" -> pour, over). */
export function terms(text: string): string[] {
  return (
    fold(text)
      .replace(/['’]/g, '')
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** Words as a reader counts them: "pour-over" and "don't" are one word each. */
export function words(text: string): string[] {
  return text.match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? [];
}

/**
 * Runs of words not broken by punctuation, each as lower-case surface words,
 * so keyword phrases never straddle a sentence or a comma.
 */
export function phraseRuns(text: string): string[][] {
  return text
    .split(/[.!?;:,()[\]{}"“”„«»‹›…|/\\–—]+|\s-\s|\n/)
    .map(
      (chunk) =>
        chunk
          .toLowerCase()
          .replace(/['’]/g, '')
          .match(/[\p{L}\p{N}]+/gu) ?? [],
    )
    .filter((run) => run.length > 0);
}

/** German-aware transliteration, then lower-case ASCII words joined by hyphens. */
export function slugify(text: string, max = 100): string {
  const ascii = text
    .replace(/Ä/g, 'Ae')
    .replace(/Ö/g, 'Oe')
    .replace(/Ü/g, 'Ue')
    .replace(/ä/g, 'ae')
    .replace(/ö/g, 'oe')
    .replace(/ü/g, 'ue')
    .replace(/ß/g, 'ss')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/['’]/g, '');
  const parts = ascii.split(/[^a-z0-9]+/).filter(Boolean);
  let slug = '';
  for (const p of parts) {
    const next = slug ? `${slug}-${p}` : p;
    if (next.length > max) break;
    slug = next;
  }
  return slug || (parts[0] ?? '').slice(0, max);
}

/** Count non-overlapping occurrences of `needle` (a term sequence) in `hay`. */
export function countPhrase(hay: readonly string[], needle: readonly string[]): number {
  if (!needle.length || needle.length > hay.length) return 0;
  let count = 0;
  for (let i = 0; i + needle.length <= hay.length; i++) {
    let match = true;
    for (let j = 0; j < needle.length; j++) {
      if (hay[i + j] !== needle[j]) {
        match = false;
        break;
      }
    }
    if (match) {
      count++;
      i += needle.length - 1;
    }
  }
  return count;
}

/** Does the folded text contain the folded phrase as whole words? */
export function containsPhrase(text: string, phrase: string): boolean {
  return countPhrase(terms(text), terms(phrase)) > 0;
}

/** Shorten to at most `max` characters at a word boundary, marking the cut. */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space >= max * 0.5 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
