import { salvageDocument } from '../../core/salvage.ts';
import { forgetAppliedBefore } from './applied-log.ts';
import { SiteData } from './site-data.ts';
import type { SiteDeps } from './site-deps.ts';

/**
 * When site.json is damaged: keep every valid page and setting (see
 * core/salvage.ts), never hand out an id a kept page has, and remember that
 * data was lost, so the site is not seeded over it and crash recovery does
 * not vouch for applies it can no longer see.
 */
export function salvageSite(raw: unknown, now: number): { data: SiteData; dropped: string[] } | null {
  const kept = salvageDocument(SiteData, raw);
  if (!kept) return null;
  const data = kept.data;
  const maxId = data.pages.reduce((m, p) => Math.max(m, p.id), 0);
  if (data.next_id <= maxId) data.next_id = maxId + 1;
  data.seeded_at ??= new Date(now).toISOString();
  if (kept.dropped.some((p) => p === 'applied' || p.startsWith('applied.') || p === 'applied_horizon')) forgetAppliedBefore(data, now);
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
