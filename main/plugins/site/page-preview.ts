import type { FieldChange } from '../../contract/staged.ts';
import { compactDiff } from '../../lib/line-diff.ts';
import type { Page } from './site-data.ts';
import { truncate } from './text.ts';

/**
 * Field-by-field previews of page writes, written for a person in the
 * approval console: short fields verbatim, long content as a line diff or a
 * clipped excerpt, translation links as "de: #8".
 */

/** Fields in the order a person reads them. */
export const PREVIEW_FIELDS = [
  'title',
  'slug',
  'status',
  'language',
  'excerpt',
  'seo_title',
  'seo_description',
  'focus_keyword',
  'content',
  'translations',
] as const;
export type PreviewField = (typeof PREVIEW_FIELDS)[number];
export type PageFields = Pick<Page, PreviewField>;

/** Content shorter than this (and of few lines) is shown whole on both sides. */
const SHORT_CONTENT = 500;
const SHORT_LINES = 10;
const CLIP_CONTENT = 600;

// Made at the first preview that names a language: building it loads ICU's display names, some 15 ms that every
// command opening the core (the CLI without a service, each start of the service) paid at import.
let languageNames: Intl.DisplayNames | undefined;
export function languageName(code: string): string {
  try {
    languageNames ??= new Intl.DisplayNames(['en'], { type: 'language' });
    return languageNames.of(code) ?? code;
  } catch {
    return code;
  }
}

/** Translation links as a person reads them: "de: #8, fr: #9", or "(none)". */
export const linksText = (t: Page['translations']) =>
  Object.keys(t)
    .sort()
    .map((lang) => `${lang}: #${t[lang]}`)
    .join(', ') || '(none)';

function clipContent(content: string): string {
  if (content.length <= CLIP_CONTENT) return content;
  return `${truncate(content, CLIP_CONTENT)}\n… (${content.length.toLocaleString('en')} characters, ${content.split('\n').length} lines in all)`;
}

function contentChange(before: string | undefined, after: string | undefined): FieldChange {
  if (before === undefined) return { field: 'content', after: clipContent(after ?? '') };
  if (after === undefined) return { field: 'content', before: clipContent(before) };
  const short = (s: string) => s.length <= SHORT_CONTENT && s.split('\n').length <= SHORT_LINES;
  if (short(before) && short(after)) return { field: 'content', before, after };
  const d = compactDiff(before, after);
  return { field: 'content', before: d.before, after: d.after };
}

/**
 * Changes between two versions of a page; `before` null for a creation,
 * `after` null for a deletion. Unchanged fields are left out, except that a
 * creation or deletion lists every non-empty field.
 */
export function pageChanges(before: PageFields | null, after: PageFields | null): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of PREVIEW_FIELDS) {
    const b = before?.[field];
    const a = after?.[field];
    if (field === 'translations') {
      const bt = b as Page['translations'] | undefined;
      const at = a as Page['translations'] | undefined;
      if (linksText(bt ?? {}) === linksText(at ?? {})) continue;
      changes.push({ field, ...(bt ? { before: linksText(bt) } : {}), ...(at ? { after: linksText(at) } : {}) });
      continue;
    }
    if (b === a) continue;
    if ((b === undefined || b === '') && (a === undefined || a === '')) continue;
    if (field === 'content') changes.push(contentChange(b as string | undefined, a as string | undefined));
    else changes.push({ field, ...(b !== undefined ? { before: b } : {}), ...(a !== undefined ? { after: a } : {}) });
  }
  return changes;
}

export const pageLabel = (p: { title: string; id?: number }) =>
  `'${truncate(p.title, 80)}'${p.id ? ` (#${p.id})` : ''}`;

export function fieldList(changes: readonly FieldChange[]): string {
  return changes.map((c) => c.field).join(', ');
}
