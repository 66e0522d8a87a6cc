import { z } from 'zod';
import { GatehouseError } from '../../core/errors.ts';
import { defineTool, type CallContext, type Tool } from '../../core/calls/tool.ts';
import {
  findPage,
  freeSlug,
  parseTarget,
  requireCanEdit,
  requireCapability,
  requireSlugFree,
  requireVersion,
  targetOf,
  pageRefTarget,
} from './page-access.ts';
import { fieldList, pageChanges, pageLabel, type PageFields } from './page-preview.ts';
import { Page, PageId, type SiteData } from './site-data.ts';
import { isoNow, PLUGIN_ID, type SiteDeps } from './site-deps.ts';
import { slugify } from './text.ts';
import { f } from './tool-schemas.ts';
import { toOut } from './tools-pages-read.ts';
import { applyOnce, appliedFrom } from './applied-log.ts';
import { lazySchema } from '../../contract/lazy-schema.ts';

/** The fields pages_create and pages_update may set. */
const EDITABLE = ['title', 'slug', 'content', 'excerpt', 'seo_title', 'seo_description', 'focus_keyword'] as const;
type Editable = (typeof EDITABLE)[number];

/** Said in the preview of a creation whose slug comes from the title: the slug is chosen again on approval. */
export const DERIVED_SLUG_NOTE = ' (or the next free slug, e.g. -2, if that one is taken when this is approved)';

export const WRITE_ANNOTATIONS = { readOnlyHint: false, openWorldHint: false } as const;

const CreateInput = lazySchema(() =>
  z.object({
    title: f.title,
    content: f.content
      .default('')
      .describe(
        'Page body in Markdown: start with one "# " heading, "## "/"### " for sections, links as [text](/slug/). At most 200 KB.',
      ),
    slug: f.slug
      .optional()
      .describe(
        'URL slug; derived from the title when left out, at the moment a person approves (with -2, -3... if taken by then). An explicit slug that is taken is refused.',
      ),
    excerpt: f.excerpt.default(''),
    status: f.status
      .default('draft')
      .describe('"draft" (default) or "publish"; publishing needs the publish_pages capability.'),
    language: f.language.optional().describe('Language code; defaults to the site language.'),
    seo_title: f.seo_title.default(''),
    seo_description: f.seo_description.default(''),
    focus_keyword: f.focus_keyword.default(''),
  }),
);

const UpdateInput = lazySchema(() =>
  z.object({
    id: f.id,
    if_version: f.if_version.optional(),
    title: f.title.optional(),
    slug: f.slug.optional(),
    content: f.content.optional().describe('New Markdown body, replacing the whole content (at most 200 KB).'),
    excerpt: f.excerpt.optional(),
    seo_title: f.seo_title.optional(),
    seo_description: f.seo_description.optional(),
    focus_keyword: f.focus_keyword.optional(),
  }),
);

/** What apply receives; re-validated because it comes back from the staging store. */
const CreatePayload = lazySchema(() =>
  z.object({
    fields: Page.pick({
      title: true,
      slug: true,
      status: true,
      language: true,
      excerpt: true,
      seo_title: true,
      seo_description: true,
      focus_keyword: true,
      content: true,
    }),
    author_id: z.string().min(1),
    /** the agent chose no slug: derive it from the title when the write is applied, not when it was staged */
    slug_from_title: z.boolean().default(false),
  }),
);
const UpdatePayload = lazySchema(() =>
  z.object({
    id: PageId,
    base_version: z.number().int().positive(),
    set: Page.pick({
      title: true,
      slug: true,
      content: true,
      excerpt: true,
      seo_title: true,
      seo_description: true,
      focus_keyword: true,
    }).partial(),
  }),
);

export function parsePayload<S extends z.ZodType>(schema: S, payload: unknown, tool: string): z.infer<S> {
  const parsed = schema.safeParse(payload);
  if (!parsed.success)
    throw new GatehouseError('invalid_value', `the staged payload for ${tool} is not valid; stage the change again`);
  return parsed.data;
}

export const previewFields = (p: Page): PageFields => ({
  title: p.title,
  slug: p.slug,
  status: p.status,
  language: p.language,
  excerpt: p.excerpt,
  seo_title: p.seo_title,
  seo_description: p.seo_description,
  focus_keyword: p.focus_keyword,
  content: p.content,
  translations: p.translations,
});

export function requireFreshVersion(page: Page, ifVersion: number | undefined): void {
  if (ifVersion !== undefined) requireVersion(page, page.id, ifVersion);
}

/** The page's version, or null when it does not exist (the staging layer's stale check). */
export function versionOf(deps: SiteDeps, target: string): Promise<number | null> {
  const id = parseTarget(target);
  const page = id === null ? undefined : deps.store.read().pages.find((p) => p.id === id);
  return Promise.resolve(page?.version ?? null);
}

export function insertPage(
  draft: SiteData,
  fields: z.infer<typeof CreatePayload>['fields'],
  authorId: string,
  now: string,
  translations: Page['translations'] = {},
): Page {
  requireSlugFree(draft, fields.slug, null);
  const page: Page = {
    id: draft.next_id,
    ...fields,
    translations,
    author_id: authorId,
    created: now,
    modified: now,
    version: 1,
  };
  draft.pages.push(page);
  draft.next_id += 1;
  return page;
}

export function pageWriteTools(deps: SiteDeps): Tool[] {
  const create = defineTool({
    name: 'pages_create',
    title: 'Create a page',
    description:
      'Stage a new page (a draft unless status is "publish"). Nothing changes until the preview is approved.',
    input: CreateInput,
    capability: 'edit_pages',
    feature: 'site.pages.write',
    plugin: PLUGIN_ID,
    write: true,
    annotations: { ...WRITE_ANNOTATIONS, destructiveHint: false, idempotentHint: false },
    async preview(input, ctx: CallContext) {
      requireCapability(ctx, 'edit_pages', 'create pages');
      if (input.status === 'publish') requireCapability(ctx, 'publish_pages', 'publish pages');
      const data = deps.store.read();
      let slug: string;
      if (input.slug) {
        requireSlugFree(data, input.slug, null);
        slug = input.slug;
      } else {
        slug = freeSlug(data, slugify(input.title) || 'page', null);
      }
      const fields = {
        title: input.title,
        slug,
        status: input.status,
        language: input.language ?? data.site.language,
        excerpt: input.excerpt,
        seo_title: input.seo_title,
        seo_description: input.seo_description,
        focus_keyword: input.focus_keyword,
        content: input.content,
      };
      return {
        preview: {
          // A slug derived from the title is taken when a person approves: another creation approved first may hold it by then.
          summary: `Create ${fields.status === 'publish' ? 'published' : 'draft'} page ${pageLabel(fields)} at /${slug}/${input.slug ? '' : DERIVED_SLUG_NOTE}`,
          kind: 'diff' as const,
          changes: pageChanges(null, { ...fields, translations: {} }),
        },
        payload: { fields, author_id: ctx.user.id, slug_from_title: !input.slug },
        target: null,
        target_version: null,
      };
    },
    async apply(payload, _ctx, staged) {
      const p = parsePayload(CreatePayload, payload, 'pages_create');
      return applyOnce(deps, staged, (draft) => {
        // Several creations staged with one title all previewed the same free slug; each takes the next free one now.
        const fields = p.slug_from_title
          ? { ...p.fields, slug: freeSlug(draft, slugify(p.fields.title) || 'page', null) }
          : p.fields;
        const page = structuredClone(insertPage(draft, fields, p.author_id, isoNow(deps)));
        const moved =
          page.slug === p.fields.slug
            ? ''
            : ` (not /${p.fields.slug}/ as previewed: another page took that slug first)`;
        return {
          structured: { page: toOut(draft.site, page) },
          text: `Created page ${pageLabel(page)} at /${page.slug}/${moved} (${page.status}).`,
          target: targetOf(page.id),
        };
      });
    },
    applied: appliedFrom(deps),
  });

  const update = defineTool({
    name: 'pages_update',
    title: 'Update a page',
    description:
      "Stage changes to a page's title, slug, content, excerpt or SEO fields; only the fields you pass change. Nothing changes until the preview is approved. Use pages_publish to change the status and translate_page for translations.",
    input: UpdateInput,
    target: pageRefTarget,
    capability: 'edit_pages',
    feature: 'site.pages.write',
    plugin: PLUGIN_ID,
    write: true,
    annotations: { ...WRITE_ANNOTATIONS, destructiveHint: true, idempotentHint: true },
    async preview(input, ctx) {
      const data = deps.store.read();
      const page = findPage(data, input.id);
      requireCanEdit(ctx, page, 'update this page');
      requireFreshVersion(page, input.if_version);
      const set: Partial<Pick<Page, Editable>> = {};
      for (const key of EDITABLE) {
        const value = input[key];
        if (value !== undefined && value !== page[key]) set[key] = value;
      }
      if (!Object.keys(set).length)
        throw new GatehouseError(
          'invalid_value',
          `nothing to change: the values given for page #${page.id} are the ones it already has`,
        );
      if (set.slug) requireSlugFree(data, set.slug, page.id);
      const changes = pageChanges(previewFields(page), { ...previewFields(page), ...set });
      return {
        preview: { summary: `Update page ${pageLabel(page)}: ${fieldList(changes)}`, kind: 'diff' as const, changes },
        payload: { id: page.id, base_version: page.version, set },
        target: targetOf(page.id),
        target_version: page.version,
      };
    },
    currentVersion: (target) => versionOf(deps, target),
    async apply(payload, _ctx, staged) {
      const p = parsePayload(UpdatePayload, payload, 'pages_update');
      return applyOnce(deps, staged, (draft) => {
        const current = requireVersion(
          draft.pages.find((x) => x.id === p.id),
          p.id,
          p.base_version,
        );
        if (p.set.slug) requireSlugFree(draft, p.set.slug, p.id);
        Object.assign(current, p.set, { version: current.version + 1, modified: isoNow(deps) });
        const page = structuredClone(current);
        return {
          structured: { page: toOut(draft.site, page) },
          text: `Updated page ${pageLabel(page)}: ${Object.keys(p.set).join(', ')} (now version ${page.version}).`,
        };
      });
    },
    applied: appliedFrom(deps),
  });

  return [create, update];
}
