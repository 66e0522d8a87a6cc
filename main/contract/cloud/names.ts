import { z } from 'zod';

/**
 * The one rule for names a client or person gives (sites, accounts, account
 * keys, tokens), shared by the app and the cloud gateway.
 */

// Bidi marks, embeddings, overrides and isolates; zero-width space, word joiner, invisible operators, BOM, Mongolian vowel separator, soft hyphen.
const HIDDEN = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u200b\u2060-\u2064\ufeff\u180e\u00ad]/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// The joiners (ZWNJ, ZWJ) are part of how Persian, Indic scripts and emoji sequences are written: taken only there,
// between an emoji or a letter of such a script and what it joins to; in Latin, Greek or Cyrillic text they only hide.
const JOINER = /[\u200c\u200d]/gu;
const JOINS_AFTER =
  /(?:[\p{Extended_Pictographic}\p{Emoji_Modifier}\ufe0f]|(?![\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}])[\p{L}\p{M}])$/u;
const JOINS_BEFORE = /^[\p{L}\p{M}\p{Extended_Pictographic}]/u;

const codePoint = (c: string, at: number) =>
  `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at position ${at + 1}`;

/** Why `s` is not fit to be a name, or null: control characters, bidi controls and zero-width characters would hide or reorder what a person reads. */
export function nameProblem(s: string): string | null {
  const control = CONTROL.exec(s);
  if (control) return `no control characters or line breaks (found ${codePoint(control[0], control.index)})`;
  const hidden = HIDDEN.exec(s);
  if (hidden) return `no bidi controls or zero-width characters (found ${codePoint(hidden[0], hidden.index)})`;
  for (const j of s.matchAll(JOINER)) {
    if (!JOINS_AFTER.test(s.slice(0, j.index)) || !JOINS_BEFORE.test(s.slice(j.index + 1)))
      return `no bidi controls or zero-width characters (found ${codePoint(j[0], j.index)})`;
  }
  return null;
}

/** A name a client or person gives (a site, an account, a key label): one line of visible text. */
export const nameText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .superRefine((s, c) => {
      const problem = nameProblem(s);
      if (problem) c.addIssue({ code: 'custom', message: problem });
    });
