import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiDispatch } from '../../main/contract/api.ts';
import type { StagedPayload } from '../../main/contract/staged.ts';
import { filesUnder } from '../cli/cli-harness.ts';
import { strictJsonProblems } from '../helpers/strict-json.ts';
import type { Journal } from './crash-load.ts';

/**
 * The invariants after each restart, each violation a line of text:
 * - every JSON/JSONL file in the data dir is strict JSON (jq reads it);
 * - no write is left `applying` (recovery resolved it);
 * - a write's page exists exactly once if its record says confirmed, and not
 *   at all otherwise (nothing applied twice, nothing else applied);
 * - every confirm the service acknowledged is applied, confirmed, and has
 *   exactly one `confirmed` audit entry (and nothing else has one);
 * - an acknowledged discard is discarded, not applied, with one `discarded` entry;
 * - no write was confirmed after its expiry, and a pending write past its
 *   expiry cannot be confirmed.
 */
export async function checkInvariants(
  dataDir: string,
  admin: ApiDispatch,
  j: Journal,
  now: () => number,
): Promise<{ violations: string[]; expiredProbes: number }> {
  const v: string[] = [];
  // An audit query first: it waits for the writer, which then stays idle until this check confirms anything.
  const confirmedEntries = await auditCounts(admin, 'confirmed');
  const discardedEntries = await auditCounts(admin, 'discarded');
  const files = (await filesUnder(dataDir)).filter((f) => /\.jsonl?$/.test(f));
  v.push(...(await strictJsonProblems(files)).map((p) => `file: ${p}`));

  const list = await admin('staged.list', {});
  if (!list.ok) return { violations: [...v, `staged.list failed: ${list.code} ${list.message}`], expiredProbes: 0 };
  const records = new Map(list.data.map((s: StagedPayload) => [s.id, s]));
  const site = JSON.parse(await readFile(join(dataDir, 'site.json'), 'utf8')) as {
    pages: Array<{ slug: string; title: string }>;
  };

  for (const s of j.staged.values()) {
    const r = records.get(s.id);
    const pages = site.pages.filter((p) => p.title === s.title);
    const applied = pages.length;
    if (!r) {
      v.push(`${s.id}: acknowledged stage has no record (history holds ${records.size})`);
      continue;
    }
    if (r.status === 'applying') v.push(`${s.id}: still applying after recovery`);
    if (applied > 1) v.push(`${s.id}: applied ${applied} times`);
    if (r.status === 'confirmed' && applied !== 1) v.push(`${s.id}: confirmed but its page exists ${applied} times`);
    if (r.status !== 'confirmed' && applied !== 0) v.push(`${s.id}: ${r.status} but its page exists`);
    const audits = confirmedEntries.get(s.id) ?? 0;
    if (r.status === 'confirmed' && audits !== 1) v.push(`${s.id}: confirmed with ${audits} confirmed audit entries`);
    if (r.status !== 'confirmed' && audits !== 0) v.push(`${s.id}: ${r.status} with ${audits} confirmed audit entries`);
    if (j.confirmed.has(s.id) && r.status !== 'confirmed')
      v.push(`${s.id}: acknowledged confirm (${j.confirmed.get(s.id)}) but the record says ${r.status}`);
    if (j.discarded.has(s.id) && (r.status !== 'discarded' || applied !== 0))
      v.push(`${s.id}: acknowledged discard but ${r.status}, applied ${applied}`);
    const discards = discardedEntries.get(s.id) ?? 0;
    if (j.discarded.has(s.id) ? discards !== 1 : discards > 1) v.push(`${s.id}: ${discards} discarded audit entries`);
    if (j.refusedExpired.has(s.id) && applied !== 0) v.push(`${s.id}: refused as expired but applied`);
    if (r.status === 'confirmed' && r.decided_at && r.decided_at > r.expires_at)
      v.push(`${s.id}: confirmed at ${r.decided_at}, after its expiry ${r.expires_at}`);
  }
  // Nothing else applied: every page this test created belongs to a write it staged.
  const titles = new Set([...j.staged.values()].map((s) => s.title));
  for (const p of site.pages)
    if (p.title.startsWith('Crash ') && !titles.has(p.title))
      v.push(`page '${p.title}' was applied without an acknowledged stage`);
  for (const id of confirmedEntries.keys())
    if (!j.staged.has(id) && records.get(id)?.tool === 'pages_create')
      v.push(`${id}: confirmed entry for an unknown write`);

  // Past its expiry, a pending write cannot be confirmed (the restart's sweep has usually expired it already).
  let expiredProbes = 0;
  const late = [...records.values()]
    .filter((r) => r.status !== 'confirmed' && Date.parse(r.expires_at) < now() && j.staged.has(r.id))
    .slice(-4);
  for (const r of late) {
    const res = await admin('staged.confirm', { id: r.id });
    expiredProbes++;
    if (res.ok || (res.code !== 'staged_expired' && res.code !== 'staged_already_decided'))
      v.push(`${r.id}: a confirm after expiry answered ${res.ok ? 'ok' : res.code}`);
    else j.refusedExpired.add(r.id);
  }
  return { violations: v, expiredProbes };
}

async function auditCounts(admin: ApiDispatch, result: 'confirmed' | 'discarded'): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let cursor: string | undefined;
  do {
    const page = await admin('audit.query', { result, limit: 1000, ...(cursor ? { cursor } : {}) });
    if (!page.ok) throw new Error(`audit.query failed: ${page.code} ${page.message}`);
    for (const e of page.data.entries) if (e.staged_id) counts.set(e.staged_id, (counts.get(e.staged_id) ?? 0) + 1);
    cursor = page.data.next_cursor ?? undefined;
  } while (cursor);
  return counts;
}
