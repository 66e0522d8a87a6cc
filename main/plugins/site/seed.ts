import type { Page, SiteData } from './site-data.ts';
import { DEFAULT_SITE_SETTINGS } from './site-data.ts';
import { SEED_PAGES, SEED_SITE } from './seed-pages.ts';
import type { SiteDeps } from './site-deps.ts';

const DAY = 24 * 60 * 60 * 1000;

/**
 * First run only: an empty site that was never seeded gets the sample pages
 * (and the sample site settings, unless someone already changed them).
 * A site whose pages were all deleted later stays empty.
 */
export async function seedIfEmpty(deps: SiteDeps, adminUserId: string): Promise<boolean> {
  const fresh = (d: SiteData) => d.pages.length === 0 && d.seeded_at === null && d.next_id === 1;
  if (!fresh(deps.store.read())) return false;
  return deps.store.update((draft) => {
    if (!fresh(draft)) return false; // another caller seeded while we queued
    const now = deps.clock.now();
    const base = draft.next_id;
    draft.pages = SEED_PAGES.map((s, i): Page => {
      const at = new Date(now - s.age_days * DAY).toISOString();
      return {
        id: base + i,
        slug: s.slug,
        title: s.title,
        content: s.content,
        excerpt: s.excerpt,
        status: s.status,
        seo_title: s.seo_title,
        seo_description: s.seo_description,
        focus_keyword: s.focus_keyword,
        language: s.language,
        translations: Object.fromEntries(Object.entries(s.translations).map(([lang, pos]) => [lang, base + pos - 1])),
        author_id: adminUserId,
        created: at,
        modified: at,
        version: 1,
      };
    });
    draft.next_id = base + SEED_PAGES.length;
    const untouched = (Object.keys(DEFAULT_SITE_SETTINGS) as (keyof typeof DEFAULT_SITE_SETTINGS)[]).every(
      (k) => draft.site[k] === DEFAULT_SITE_SETTINGS[k],
    );
    if (untouched) draft.site = { ...SEED_SITE };
    draft.seeded_at = new Date(now).toISOString();
    return true;
  });
}
