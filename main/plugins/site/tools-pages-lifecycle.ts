import { z } from 'zod';
import { GatehouseError } from '../../core/errors.ts';
import { defineTool, type Tool } from '../../core/calls/tool.ts';
import type { FieldChange } from '../../contract/staged.ts';
import { findPage, requireCapability, requireVersion, targetOf, pageRefTarget } from './page-access.ts';
import { linksText, pageChanges, pageLabel } from './page-preview.ts';
import { PageId } from './site-data.ts';
import { isoNow, PLUGIN_ID, type SiteDeps } from './site-deps.ts';
import { f } from './tool-schemas.ts';
import { toOut } from './tools-pages-read.ts';
import { applyOnce, appliedFrom } from './applied-log.ts';
import { parsePayload, previewFields, requireFreshVersion, versionOf, WRITE_ANNOTATIONS } from './tools-pages-write.ts';
import { lazySchema } from '../../contract/lazy-schema.ts';

const DeleteInput = lazySchema(() => z.object({ id: f.id, if_version: f.if_version.optional() }));
const PublishInput = lazySchema(() =>
  z.object({
    id: f.id,
    action: z
      .enum(['publish', 'unpublish'])
      .default('publish')
      .describe('"publish" makes the page live; "unpublish" turns it back into a draft.'),
    if_version: f.if_version.optional(),
  }),
);
const DeletePayload = lazySchema(() => z.object({ id: PageId, base_version: z.number().int().positive() }));
const PublishPayload = lazySchema(() =>
  z.object({
    id: PageId,
    base_version: z.number().int().positive(),
    status: z.enum(['draft', 'publish']),
  }),
);

export function pageLifecycleTools(deps: SiteDeps): Tool[] {
  const del = defineTool({
    name: 'pages_delete',
    title: 'Delete a page',
    description:
      'Stage the permanent deletion of a page; its translations stay but lose the link to it. Nothing changes until the preview is approved.',
    input: DeleteInput,
    target: pageRefTarget,
    capability: 'delete_pages',
    feature: 'site.pages.write',
    plugin: PLUGIN_ID,
    write: true,
    annotations: { ...WRITE_ANNOTATIONS, destructiveHint: true, idempotentHint: true },
    async preview(input, ctx) {
      const data = deps.store.read();
      const page = findPage(data, input.id);
      requireCapability(ctx, 'delete_pages', 'delete pages');
      if (page.author_id !== ctx.user.id)
        requireCapability(ctx, 'edit_others_pages', `delete page #${page.id}: it belongs to another user`);
      requireFreshVersion(page, input.if_version);
      const linked = data.pages.filter((p) => p.id !== page.id && Object.values(p.translations).includes(page.id));
      const unlink: FieldChange[] = linked.map((p) => {
        const after = Object.fromEntries(Object.entries(p.translations).filter(([, id]) => id !== page.id));
        return {
          field: `translations of #${p.id} ('${p.title}')`,
          before: linksText(p.translations),
          after: linksText(after),
        };
      });
      const tail = linked.length ? `; unlinks ${linked.length} translation(s)` : '';
      return {
        preview: {
          summary: `Delete ${page.status === 'publish' ? 'published' : 'draft'} page ${pageLabel(page)} at /${page.slug}/${tail}`,
          kind: 'diff' as const,
          changes: [...pageChanges(previewFields(page), null), ...unlink],
        },
        payload: { id: page.id, base_version: page.version },
        target: targetOf(page.id),
        target_version: page.version,
      };
    },
    currentVersion: (target) => versionOf(deps, target),
    async apply(payload, _ctx, staged) {
      const p = parsePayload(DeletePayload, payload, 'pages_delete');
      return applyOnce(deps, staged, (draft) => {
        const page = requireVersion(
          draft.pages.find((x) => x.id === p.id),
          p.id,
          p.base_version,
        );
        const now = isoNow(deps);
        const unlinked: number[] = [];
        for (const other of draft.pages) {
          const langs = Object.keys(other.translations).filter((l) => other.translations[l] === page.id);
          if (!langs.length || other.id === page.id) continue;
          for (const l of langs) delete other.translations[l];
          other.version += 1;
          other.modified = now;
          unlinked.push(other.id);
        }
        draft.pages = draft.pages.filter((x) => x.id !== page.id);
        const result = { deleted: { id: page.id, title: page.title, slug: page.slug }, unlinked };
        return {
          structured: result,
          text: `Deleted page ${pageLabel(result.deleted)}.${unlinked.length ? ` Unlinked from: ${unlinked.map((i) => `#${i}`).join(', ')}.` : ''}`,
        };
      });
    },
    applied: appliedFrom(deps),
  });

  const publish = defineTool({
    name: 'pages_publish',
    title: 'Publish or unpublish a page',
    description:
      'Stage publishing a draft (or, with action "unpublish", turning a live page back into a draft). Nothing changes until the preview is approved.',
    input: PublishInput,
    target: pageRefTarget,
    capability: 'publish_pages',
    feature: 'site.pages.write',
    plugin: PLUGIN_ID,
    write: true,
    annotations: { ...WRITE_ANNOTATIONS, destructiveHint: false, idempotentHint: true },
    async preview(input, ctx) {
      const data = deps.store.read();
      const page = findPage(data, input.id);
      requireCapability(ctx, 'publish_pages', 'publish pages');
      if (page.author_id !== ctx.user.id)
        requireCapability(ctx, 'edit_others_pages', `${input.action} page #${page.id}: it belongs to another user`);
      requireFreshVersion(page, input.if_version);
      const status = input.action === 'publish' ? 'publish' : 'draft';
      if (page.status === status)
        throw new GatehouseError(
          'conflict',
          `page #${page.id} is already ${status === 'publish' ? 'published' : 'a draft'}`,
          { page_id: page.id, status },
        );
      return {
        preview: {
          summary: `${input.action === 'publish' ? 'Publish' : 'Unpublish'} page ${pageLabel(page)} at /${page.slug}/`,
          kind: 'diff' as const,
          changes: [{ field: 'status', before: page.status, after: status }],
        },
        payload: { id: page.id, base_version: page.version, status },
        target: targetOf(page.id),
        target_version: page.version,
      };
    },
    currentVersion: (target) => versionOf(deps, target),
    async apply(payload, _ctx, staged) {
      const p = parsePayload(PublishPayload, payload, 'pages_publish');
      return applyOnce(deps, staged, (draft) => {
        const current = requireVersion(
          draft.pages.find((x) => x.id === p.id),
          p.id,
          p.base_version,
        );
        Object.assign(current, { status: p.status, version: current.version + 1, modified: isoNow(deps) });
        const page = structuredClone(current);
        return {
          structured: { page: toOut(draft.site, page) },
          text: `Page ${pageLabel(page)} is now ${page.status === 'publish' ? 'published' : 'a draft'}.`,
        };
      });
    },
    applied: appliedFrom(deps),
  });

  return [del, publish];
}
