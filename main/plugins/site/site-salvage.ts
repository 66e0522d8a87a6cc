import { salvageDocument } from '../../core/ports/salvage.ts';
import { forgetAppliedBefore } from './applied-log.ts';
import { DEFAULT_SITE_SETTINGS, SiteData, SiteSettings } from './site-data.ts';
import type { SiteDeps } from './site-deps.ts';

/**
 * When site.json is damaged: keep every valid page and setting (see
 * core/ports/salvage.ts), never hand out an id a kept page has, and remember that
 * data was lost, so the site is not seeded over it and crash recovery does
 * not vouch for applies it can no longer see.
 */
export function salvageSite(raw: unknown, now: number): { data: SiteData; dropped: string[] } | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  // Settings the site cannot do without fall back to their defaults one by one.
  const doc = { ...(raw as Record<string, unknown>) };
  const pre: string[] = [];
  const site = typeof doc.site === 'object' && doc.site !== null ? (doc.site as Record<string, unknown>) : {};
  doc.site = Object.fromEntries(
    (Object.keys(SiteSettings.shape) as Array<keyof SiteSettings>).map((k) => {
      const ok = SiteSettings.shape[k].safeParse(site[k]);
      if (!ok.success) pre.push(`site.${k}`);
      return [k, ok.success ? ok.data : DEFAULT_SITE_SETTINGS[k]];
    }),
  );
  if (!SiteData.shape.next_id.safeParse(doc.next_id).success) {
    pre.push('next_id');
    doc.next_id = 1;
  }
  const kept = salvageDocument(SiteData, doc);
  if (!kept) return null;
  kept.dropped.unshift(...pre);
  const data = kept.data;
  const maxId = data.pages.reduce((m, p) => Math.max(m, p.id), 0);
  if (data.next_id <= maxId) data.next_id = maxId + 1;
  data.seeded_at ??= new Date(now).toISOString();
  if (kept.dropped.some((p) => p === 'applied' || p.startsWith('applied.') || p === 'applied_horizon'))
    forgetAppliedBefore(data, now);
  return { data, dropped: kept.dropped };
}

/** After the whole site file was lost (moved aside, started empty): never seed sample pages over it. */
export async function markDataLost(deps: SiteDeps): Promise<void> {
  await deps.store.update((draft) => {
    const now = deps.clock.now();
    draft.seeded_at ??= new Date(now).toISOString();
    forgetAppliedBefore(draft, now);
  });
}
