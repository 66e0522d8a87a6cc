import { GatehouseError } from '../../core/errors.ts';
import type { AiProvider } from '../../core/ports/ports.ts';
import { languageName } from './page-preview.ts';
import {
  CONTENT_MAX_BYTES,
  EXCERPT_MAX,
  FOCUS_KEYWORD_MAX,
  SEO_DESCRIPTION_MAX,
  SEO_TITLE_MAX,
  TITLE_MAX,
  type Page,
} from './site-data.ts';

/**
 * Translating a page field by field: one provider call per non-empty field,
 * the field's text as the whole prompt and the instructions in the system
 * message, so the provider never has to produce (or we parse) a JSON blob.
 */

export const TRANSLATED_FIELDS = [
  'title',
  'excerpt',
  'seo_title',
  'seo_description',
  'focus_keyword',
  'content',
] as const;
export type TranslatedField = (typeof TRANSLATED_FIELDS)[number];
export type Translation = Pick<Page, TranslatedField>;

const LIMITS: Record<TranslatedField, number> = {
  title: TITLE_MAX,
  excerpt: EXCERPT_MAX,
  seo_title: SEO_TITLE_MAX,
  seo_description: SEO_DESCRIPTION_MAX,
  focus_keyword: FOCUS_KEYWORD_MAX,
  content: CONTENT_MAX_BYTES,
};

const HINTS: Record<TranslatedField, string> = {
  title: 'The text is a page title: keep it short and natural.',
  excerpt: 'The text is a short page summary.',
  seo_title:
    'The text is the title shown in search results: keep it under 60 characters and keep the main search phrase near the start.',
  seo_description: 'The text is a meta description for search results: keep it between 120 and 160 characters.',
  focus_keyword:
    'The text is a search keyword: give the phrase a native speaker would type into a search engine, not a literal translation.',
  content:
    'The text is a page body in Markdown: keep every heading level, list, emphasis and link exactly as Markdown; translate link text but never change link targets (URLs and /paths/).',
};

export function systemPrompt(field: TranslatedField, from: string, to: string): string {
  return [
    `You translate website content from ${languageName(from)} (${from}) into ${languageName(to)} (${to}).`,
    HINTS[field],
    'Keep the meaning, tone and brand names. Reply with the translation only: no quotes, no notes, no code fences.',
  ].join(' ');
}

/** Undo the wrapping models sometimes add despite being asked not to. */
export function cleanOutput(text: string, field: TranslatedField): string {
  let t = text.trim();
  const fenced = /^```[a-z]*\n([\s\S]*?)\n```$/i.exec(t);
  if (fenced) t = (fenced[1] ?? '').trim();
  if (field !== 'content') {
    t = t.replace(/\s*\n\s*/g, ' ');
    const quoted = /^["“„«'](.*)["”“»']$/.exec(t);
    if (quoted) t = (quoted[1] ?? '').trim();
  }
  return t;
}

export interface TranslateResult {
  fields: Translation;
  model: string;
  tokens_input: number;
  tokens_output: number;
  /** characters (code points) of the source text translated */
  characters: number;
}

/** One provider answer's token counts, reported as soon as it arrives: tokens are spent even when a later field fails. */
export type GenerationReport = (out: { model: string; tokens_input: number; tokens_output: number }) => void;

export async function translateFields(
  provider: AiProvider,
  source: Translation,
  from: string,
  to: string,
  signal?: AbortSignal,
  report: GenerationReport = () => {},
): Promise<TranslateResult> {
  const fields: Translation = {
    title: '',
    excerpt: '',
    seo_title: '',
    seo_description: '',
    focus_keyword: '',
    content: '',
  };
  let model = '';
  let tokensIn = 0;
  let characters = 0;
  let tokensOut = 0;
  for (const field of TRANSLATED_FIELDS) {
    const text = source[field];
    if (!text.trim()) continue;
    let out: Awaited<ReturnType<AiProvider['generate']>>;
    try {
      out = await provider.generate(
        {
          system: systemPrompt(field, from, to),
          prompt: text,
          max_tokens: Math.min(32_000, Math.max(256, Math.ceil(text.length / 2))),
        },
        signal,
      );
    } catch (e) {
      if (e instanceof GatehouseError) throw e;
      throw new GatehouseError(
        'upstream_error',
        `the AI provider '${provider.id}' failed while translating the ${field.replace('_', ' ')}; try again later`,
        { provider: provider.id, field },
      );
    }
    report(out);
    const cleaned = cleanOutput(out.text, field);
    const size = field === 'content' ? new TextEncoder().encode(cleaned).length : cleaned.length;
    if (!cleaned)
      throw new GatehouseError(
        'upstream_error',
        `the AI provider '${provider.id}' returned an empty ${field.replace('_', ' ')}; nothing was staged`,
        { provider: provider.id, field },
      );
    if (size > LIMITS[field])
      throw new GatehouseError(
        'upstream_error',
        `the AI provider '${provider.id}' returned a ${field.replace('_', ' ')} longer than the limit (${size} > ${LIMITS[field]}); nothing was staged`,
        { provider: provider.id, field },
      );
    fields[field] = cleaned;
    characters += [...text].length;
    model = out.model;
    tokensIn += out.tokens_input;
    tokensOut += out.tokens_output;
  }
  return { fields, model, tokens_input: tokensIn, tokens_output: tokensOut, characters };
}
