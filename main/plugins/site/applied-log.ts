import type { AppliedState, StagedRef, ToolOutput } from '../../core/calls/tool.ts';
import type { AppliedMarker, SiteData } from './site-data.ts';
import type { SiteDeps } from './site-deps.ts';

/**
 * Idempotent applies for the site's write tools. A confirmed write's change
 * and a marker `staged id -> result` go into site.json in one atomic write,
 * so after a crash the staging layer can ask whether the apply took effect
 * (`appliedState`), and an apply of the same staged id never runs twice.
 *
 * Markers are few and small: only the newest APPLIED_KEEP are kept, and a
 * result larger than MARKER_MAX_CHARS is kept as its text alone (the page
 * itself is in the site). `applied_horizon` remembers the newest marker that
 * was pruned: an intent older than that can no longer be answered ("unknown"),
 * which recovery treats as "do not apply again, let a person check".
 */
export const APPLIED_KEEP = 200;
const MARKER_MAX_CHARS = 16 * 1024;

/** Runs `change` on the site document and records its result under `staged.id`, in the same write. */
export function applyOnce(
  deps: SiteDeps,
  staged: StagedRef | undefined,
  change: (draft: SiteData) => ToolOutput,
): Promise<ToolOutput> {
  return deps.store.update((draft) => {
    const done = staged ? draft.applied[staged.id] : undefined;
    if (done) return outputOf(done);
    const out = change(draft);
    if (staged) record(draft, staged.id, out, deps.clock.now());
    return out;
  });
}

/** What recovery asks: did the apply of this staged write take effect? */
export function appliedState(data: SiteData, staged: StagedRef): AppliedState {
  const m = data.applied[staged.id];
  if (m) return { state: 'applied', output: outputOf(m) };
  if (data.applied_horizon !== null && data.applied_horizon >= staged.since) return { state: 'unknown' };
  return { state: 'not_applied' };
}

/** The `applied` method of every site write tool. */
export const appliedFrom =
  (deps: SiteDeps) =>
  (staged: StagedRef): Promise<AppliedState> =>
    Promise.resolve(appliedState(deps.store.read(), staged));

/** After site data was lost (a corrupt file): nothing applied before `now` can be vouched for. */
export function forgetAppliedBefore(draft: SiteData, now: number): void {
  draft.applied_horizon = Math.max(draft.applied_horizon ?? now, now);
}

function record(draft: SiteData, id: string, out: ToolOutput, now: number): void {
  const markers = Object.values(draft.applied);
  const last = markers[markers.length - 1];
  const text = out.text ?? '';
  const small = JSON.stringify(out.structured).length <= MARKER_MAX_CHARS;
  const structured = small
    ? out.structured
    : {
        result_omitted: 'too large to keep for crash recovery; the change itself is in the site',
        summary: text.slice(0, 1000),
      };
  draft.applied[id] = {
    at: Math.max(now, last?.at ?? now),
    text,
    structured,
    ...(out.target ? { target: out.target } : {}),
  };
  const ids = Object.keys(draft.applied);
  for (const old of ids.slice(0, Math.max(0, ids.length - APPLIED_KEEP))) {
    const gone = draft.applied[old] as AppliedMarker;
    draft.applied_horizon = Math.max(draft.applied_horizon ?? gone.at, gone.at);
    delete draft.applied[old];
  }
}

const outputOf = (m: AppliedMarker): ToolOutput => ({
  structured: m.structured,
  text: m.text,
  ...(m.target ? { target: m.target } : {}),
});
