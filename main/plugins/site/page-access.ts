import { GatehouseError } from '../../core/errors.ts';
import type { CallContext } from '../../core/calls/tool.ts';
import type { Capability } from '../../contract/users.ts';
import type { Page, SiteData, SiteSettings } from './site-data.ts';

/**
 * Lookup and permission rules shared by the tools. As on the host platform, a
 * draft is visible to its author when they can edit pages, and to users who
 * may edit others' pages (edit_others_pages); to everyone else it looks like
 * a page that does not exist.
 */

export const targetOf = (id: number) => `page:${id}`;

/** The audit target of a call that names a page by id or by slug. */
export const pageRefTarget = (input: { id?: number | undefined; slug?: string | undefined }): string | null =>
  input.id !== undefined ? targetOf(input.id) : input.slug !== undefined ? `page:/${input.slug}/` : null;

export function parseTarget(target: string): number | null {
  const m = /^page:([1-9]\d{0,15})$/.exec(target);
  return m ? Number(m[1]) : null;
}

/** Whether this user may read this page at all (published, or a draft they may edit). */
export function canRead(ctx: CallContext, page: Page): boolean {
  if (page.status === 'publish') return true;
  if (!ctx.capabilities.has('edit_pages')) return false;
  return page.author_id === ctx.user.id || ctx.capabilities.has('edit_others_pages');
}

export function visiblePages(data: SiteData, ctx: CallContext): Page[] {
  return data.pages.filter((p) => canRead(ctx, p));
}

export function findPage(data: SiteData, id: number): Page {
  const page = data.pages.find((p) => p.id === id);
  if (!page)
    throw new GatehouseError('not_found', `no page with id ${id} (pages_list shows the existing pages)`, {
      page_id: id,
    });
  return page;
}

export function findVisiblePage(
  data: SiteData,
  ctx: CallContext,
  ref: { id?: number | undefined; slug?: string | undefined },
): Page {
  const page =
    ref.id !== undefined ? data.pages.find((p) => p.id === ref.id) : data.pages.find((p) => p.slug === ref.slug);
  if (!page || !canRead(ctx, page)) {
    const what = ref.id !== undefined ? `id ${ref.id}` : `slug '${ref.slug}'`;
    throw new GatehouseError('not_found', `no page with ${what} (pages_list shows the existing pages)`);
  }
  return page;
}

export function requireCapability(ctx: CallContext, cap: Capability, doing: string): void {
  if (!ctx.capabilities.has(cap)) {
    throw new GatehouseError(
      'forbidden',
      `${ctx.user.login} (${ctx.user.role}) cannot ${doing}: the '${cap}' capability is needed`,
      { capability: cap },
    );
  }
}

/** Editing someone else's page needs edit_others_pages on top of edit_pages. */
export function requireCanEdit(ctx: CallContext, page: Page, doing: string): void {
  requireCapability(ctx, 'edit_pages', doing);
  if (page.author_id !== ctx.user.id)
    requireCapability(ctx, 'edit_others_pages', `${doing}: page #${page.id} belongs to another user`);
}

/** Slugs are unique across the whole site, translations included. */
export function requireSlugFree(data: SiteData, slug: string, exceptId: number | null): void {
  const holder = data.pages.find((p) => p.slug === slug && p.id !== exceptId);
  if (holder)
    throw new GatehouseError(
      'conflict',
      `the slug '${slug}' is already used by page #${holder.id} ('${holder.title}'); choose another slug`,
      { slug, page_id: holder.id },
    );
}

/** `base`, or `base-2`, `base-3`... whichever is free first. */
export function freeSlug(data: SiteData, base: string, exceptId: number | null): string {
  const taken = new Set(data.pages.filter((p) => p.id !== exceptId).map((p) => p.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base.slice(0, 100 - String(n).length - 1)}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Where the page lives on the site: /slug/ for the site language, /lang/slug/ for others. */
export function pageUrl(site: SiteSettings, page: Pick<Page, 'slug' | 'language'>): string {
  const base = site.url.endsWith('/') ? site.url : `${site.url}/`;
  const prefix = page.language === site.language ? '' : `${page.language.toLowerCase()}/`;
  return `${base}${prefix}${page.slug}/`;
}

/** Throws stale_preview when the page changed since the plan was made. */
export function requireVersion(page: Page | undefined, id: number, version: number): Page {
  if (!page)
    throw new GatehouseError(
      'stale_preview',
      `page #${id} was deleted after this change was previewed; preview it again`,
      { page_id: id },
    );
  if (page.version !== version) {
    throw new GatehouseError(
      'stale_preview',
      `page #${id} changed after this change was previewed (version ${version}, now ${page.version}); preview it again`,
      { page_id: id, planned_version: version, current_version: page.version },
    );
  }
  return page;
}
