import { salvageDocument } from '../../core/ports/salvage.ts';
import { describeIssues } from '../../store/zod-issues.ts';
import { UpstreamRecord, UpstreamsData } from './upstream-data.ts';

/**
 * upstreams.json with one bad upstream: that upstream is set aside, the
 * others are kept and run (as options.json keeps its valid parts). The
 * original file, the set-aside upstream in it, is moved aside whole by the
 * store (json-file-store.ts), never lost. Each drop names the upstream and
 * the field that is wrong, never a value (a field may hold a secret's name).
 */
export function salvageUpstreams(raw: unknown): { data: UpstreamsData; dropped: string[] } | null {
  const kept = salvageDocument(UpstreamsData, raw);
  if (!kept) return null;
  const list = (raw as { upstreams?: unknown } | null)?.upstreams;
  const dropped = kept.dropped.map((path) => {
    const at = /^upstreams\[(\d+)\]$/.exec(path);
    if (!at || !Array.isArray(list)) return path;
    const rec: unknown = list[Number(at[1])];
    const id = (rec as { id?: unknown } | null)?.id;
    const parsed = UpstreamRecord.safeParse(rec);
    const why = parsed.success ? 'invalid' : describeIssues(parsed.error, 2).text;
    return `${typeof id === 'string' ? `upstream '${id.slice(0, 64)}'` : 'an upstream without an id'} (${path}: ${why})`;
  });
  return { data: kept.data, dropped };
}

/** The upstreams a salvage set aside, as the health report and `serve` say it. */
export function setAsideWarning(store: {
  file: string;
  salvaged: { dropped: string[]; backup: string } | null;
}): { code: string; message: string } | null {
  if (!store.salvaged) return null;
  const { dropped, backup } = store.salvaged;
  return {
    code: 'upstream_set_aside',
    message: `${store.file} had an invalid upstream: set aside ${dropped.join('; ')}; the other upstreams run. The original, with it, is in ${backup}: fix it there and add it again (gatehouse upstreams add).`,
  };
}
