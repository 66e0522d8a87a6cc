import type { Link } from './markdown.ts';

/** A content link classified against the site's own address. */
export interface ClassifiedLink {
  text: string;
  href: string;
  kind: 'internal' | 'external' | 'other';
  /** internal links only: the slug the link points at ('' for the site root) */
  slug: string | null;
}

/**
 * Internal: root-relative or relative paths, or absolute URLs on the site's
 * host. Other: same-page anchors, mailto:, tel: and the like, which are
 * neither internal nor external for SEO purposes.
 */
export function classifyLink(link: Link, siteUrl: string): ClassifiedLink {
  const href = link.href.trim();
  const site = new URL(siteUrl);
  if (!href || href.startsWith('#')) return { ...link, kind: 'other', slug: null };
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) && !/^https?:/i.test(href)) return { ...link, kind: 'other', slug: null };
  let url: URL;
  try {
    url = new URL(href, site);
  } catch {
    return { ...link, kind: 'other', slug: null };
  }
  const isInternal = url.host.toLowerCase() === site.host.toLowerCase();
  if (!isInternal) return { ...link, kind: 'external', slug: null };
  const segments = url.pathname.split('/').filter(Boolean);
  const sitePrefix = site.pathname.split('/').filter(Boolean);
  const rest = segments.slice(sitePrefix.every((s, i) => segments[i] === s) ? sitePrefix.length : 0);
  return { ...link, kind: 'internal', slug: decodeURIComponent(rest[rest.length - 1] ?? '') };
}
