import { z } from 'zod';
import { GatehouseError } from '../../core/errors.ts';
import { defineTool, type Tool } from '../../core/calls/tool.ts';
import type { FieldChange } from '../../contract/staged.ts';
import {
  findVisiblePage,
  freeSlug,
  requireCanEdit,
  requireCapability,
  requireSlugFree,
  requireVersion,
  targetOf,
  pageRefTarget,
} from './page-access.ts';
import { fieldList, languageName, linksText, pageChanges, pageLabel } from './page-preview.ts';
import { Page, PageId, Slug, type SiteData } from './site-data.ts';
import { isoNow, PLUGIN_ID, type SiteDeps } from './site-deps.ts';
import { slugify } from './text.ts';
import { f } from './tool-schemas.ts';
import { toOut } from './tools-pages-read.ts';
import { applyOnce, appliedFrom } from './applied-log.ts';
import { insertPage, parsePayload, previewFields, versionOf, WRITE_ANNOTATIONS } from './tools-pages-write.ts';
import { translateFields } from './translate-fields.ts';
import { USAGE_EVENTS } from '../../core/calls/usage.ts';
import { lazySchema } from '../../contract/lazy-schema.ts';

/**
 * translate_page: the AI provider writes the translation at preview time, so
 * the person approving reads the actual text; apply only stores it and links
 * the pages both ways. Without a provider nothing is staged at all.
 */

const Input = lazySchema(() =>
  z.object({
    id: f.id.describe('Id of the page to translate.'),
    target_language: f.language.describe('Language to translate into, e.g. "de".'),
    overwrite: z
      .boolean()
      .default(false)
      .describe(
        'Replace the existing translation in that language (otherwise an existing one is refused with conflict).',
      ),
  }),
);

const Payload = lazySchema(() =>
  z.object({
    source_id: PageId,
    source_version: z.number().int().positive(),
    target_language: z.string(),
    translation_id: PageId.nullable(),
    translation_version: z.number().int().positive().nullable(),
    fields: Page.pick({
      title: true,
      slug: true,
      excerpt: true,
      content: true,
      seo_title: true,
      seo_description: true,
      focus_keyword: true,
    }),
    author_id: z.string().min(1),
    provider: z.string(),
    model: z.string(),
  }),
);

/** Links every page of a translation group to every other one, by language. Returns the ids it changed. */
function linkGroup(draft: SiteData, memberIds: number[], now: string, skipBump: number): number[] {
  const members = memberIds.map((id) => draft.pages.find((p) => p.id === id)).filter((p): p is Page => !!p);
  const changed: number[] = [];
  for (const m of members) {
    const next: Record<string, number> = {};
    for (const o of members) if (o.id !== m.id && o.language !== m.language) next[o.language] = o.id;
    if (JSON.stringify(Object.entries(next).sort()) === JSON.stringify(Object.entries(m.translations).sort())) continue;
    m.translations = next;
    if (m.id !== skipBump) {
      m.version += 1;
      m.modified = now;
    }
    changed.push(m.id);
  }
  return changed;
}

function pickSlug(data: SiteData, title: string, lang: string, source: Page, exceptId: number | null): string {
  const base = slugify(title) || `${source.slug}-${lang.toLowerCase()}`;
  const taken = (s: string) => data.pages.some((p) => p.slug === s && p.id !== exceptId);
  if (!taken(base)) return base;
  const withLang = Slug.safeParse(`${base}-${lang.toLowerCase()}`);
  if (withLang.success && !taken(withLang.data)) return withLang.data;
  return freeSlug(data, base, exceptId);
}

export function translateTool(deps: SiteDeps): Tool {
  return defineTool({
    name: 'translate_page',
    title: 'Translate a page',
    description:
      'Stage a machine translation of a page into another language with the configured AI provider: creates the translation as a draft (or, with overwrite, updates the existing one) and links both pages. The preview shows the translated text; nothing changes until it is approved. It needs three things: the verto.translate feature in the license (without it: entitlement_required with required_plan; product_inactive when the verto product is switched off for the site; license_expired or license_invalid), the use_ai and edit_pages capabilities (forbidden), and an AI provider through ai/generate of the Gatehouse cloud gateway (provider_unavailable; quota_exceeded names the scope and when it resets).',
    input: Input,
    target: pageRefTarget,
    capability: 'use_ai',
    feature: 'verto.translate',
    plugin: PLUGIN_ID,
    write: true,
    annotations: { ...WRITE_ANNOTATIONS, openWorldHint: true, destructiveHint: true, idempotentHint: false },
    async preview(input, ctx) {
      const data = deps.store.read();
      // The preview shows the source's text: a draft the user may not read is a page that does not exist.
      const source = findVisiblePage(data, ctx, { id: input.id });
      requireCapability(ctx, 'use_ai', 'use AI features');
      requireCapability(ctx, 'edit_pages', 'create translations');
      const lang = input.target_language;
      if (lang === source.language)
        throw new GatehouseError(
          'invalid_value',
          `page #${source.id} is already in ${languageName(lang)} (${lang}); choose another target language`,
        );
      const linkedId = source.translations[lang];
      const existing = linkedId === undefined ? undefined : data.pages.find((p) => p.id === linkedId);
      if (existing && !input.overwrite) {
        throw new GatehouseError(
          'conflict',
          `page #${source.id} already has a ${languageName(lang)} translation: #${existing.id} ('${existing.title}'); pass overwrite: true to replace it`,
          { translation_id: existing.id },
        );
      }
      if (existing) requireCanEdit(ctx, existing, 'overwrite this translation');

      const provider = deps.ai.current();
      if (!provider)
        throw new GatehouseError('provider_unavailable', `no AI provider is configured: ${deps.ai.howToConfigure}`);
      const result = await translateFields(provider, source, source.language, lang, ctx.signal, (out) =>
        deps.usage.record({
          event: USAGE_EVENTS.aiCompleted,
          product: 'verto',
          feature: 'verto.translate',
          model: out.model,
          units: 1,
          tokens_input: out.tokens_input,
          tokens_output: out.tokens_output,
        }),
      );
      // The work is done (and the AI tokens spent) now, whether or not the person approves: counted here, once.
      deps.usage.record({
        event: USAGE_EVENTS.translated,
        product: 'verto',
        feature: 'verto.translate',
        model: result.model,
        units: result.characters,
      });
      const slug = existing ? existing.slug : pickSlug(data, result.fields.title, lang, source, null);
      const fields = { ...result.fields, slug };

      const sourceLinks = { ...source.translations };
      const translationLinks: Record<string, number> = { [source.language]: source.id };
      for (const [l, id] of Object.entries(source.translations))
        if (l !== lang && data.pages.some((p) => p.id === id)) translationLinks[l] = id;
      const after = {
        ...(existing ? previewFields(existing) : { status: 'draft' as const, language: lang }),
        ...fields,
        translations: existing ? { ...existing.translations, ...translationLinks } : translationLinks,
      };
      const changes: FieldChange[] = pageChanges(existing ? previewFields(existing) : null, after);
      if (!existing) {
        const afterLinks = [
          ...Object.keys(sourceLinks)
            .filter((l) => l !== lang)
            .map((l) => `${l}: #${sourceLinks[l]}`),
          `${lang}: (the new page)`,
        ].sort();
        changes.push({
          field: `translations of #${source.id} ('${source.title}')`,
          before: linksText(sourceLinks),
          after: afterLinks.join(', '),
        });
      }
      const summary = existing
        ? `Update the ${languageName(lang)} translation ${pageLabel(existing)} of page ${pageLabel(source)}: ${fieldList(changes)}`
        : `Translate page ${pageLabel(source)} into ${languageName(lang)}: create draft '${fields.title}' at /${slug}/`;
      return {
        preview: { summary, kind: 'diff' as const, changes },
        payload: {
          source_id: source.id,
          source_version: source.version,
          target_language: lang,
          translation_id: existing?.id ?? null,
          translation_version: existing?.version ?? null,
          fields,
          author_id: ctx.user.id,
          provider: provider.id,
          model: result.model,
        },
        target: targetOf(source.id),
        target_version: source.version,
      };
    },
    currentVersion: (target) => versionOf(deps, target),
    async apply(payload, _ctx, staged) {
      const p = parsePayload(Payload, payload, 'translate_page');
      return applyOnce(deps, staged, (draft) => {
        const now = isoNow(deps);
        const source = requireVersion(
          draft.pages.find((x) => x.id === p.source_id),
          p.source_id,
          p.source_version,
        );
        let translation: Page;
        if (p.translation_id !== null) {
          translation = requireVersion(
            draft.pages.find((x) => x.id === p.translation_id),
            p.translation_id,
            p.translation_version ?? 0,
          );
          if (source.translations[p.target_language] !== translation.id)
            throw new GatehouseError(
              'stale_preview',
              `the ${p.target_language} translation of page #${source.id} changed after the preview; preview it again`,
            );
          requireSlugFree(draft, p.fields.slug, translation.id);
          Object.assign(translation, p.fields, { version: translation.version + 1, modified: now });
        } else {
          if (
            source.translations[p.target_language] !== undefined &&
            draft.pages.some((x) => x.id === source.translations[p.target_language])
          ) {
            throw new GatehouseError(
              'stale_preview',
              `page #${source.id} got a ${p.target_language} translation after the preview; preview it again`,
            );
          }
          translation = insertPage(
            draft,
            { ...p.fields, status: 'draft', language: p.target_language },
            p.author_id,
            now,
          );
        }
        const group = [
          source.id,
          ...Object.values(source.translations).filter((id) => id !== source.translations[p.target_language]),
          translation.id,
        ];
        const linked = linkGroup(draft, [...new Set(group)], now, translation.id);
        const page = structuredClone(translation);
        return {
          structured: {
            page: toOut(draft.site, page),
            source_id: p.source_id,
            linked,
            provider: p.provider,
            model: p.model,
          },
          text: `${p.translation_id !== null ? 'Updated' : 'Created'} the ${languageName(p.target_language)} translation ${pageLabel(page)} of page #${p.source_id}${page.status === 'draft' ? ' (draft: publish it with pages_publish)' : ''}.`,
        };
      });
    },
    applied: appliedFrom(deps),
  });
}
