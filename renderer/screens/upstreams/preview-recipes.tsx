import { useState } from 'react';
import {
  parseReadSpec,
  PreviewRecipe,
  readSpecText,
  recipeText,
  type RecipeShows,
  type RecipeView,
  type UpstreamDetail,
} from '../../../main/contract/index.ts';
import { DataTable } from '../../components/data-table.tsx';
import { ErrorBox } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';

/**
 * An upstream's preview recipes on the Upstreams screen (docs/staging.md,
 * "Recipes of your own"): the shipped ones and the person's, whether each is
 * used and why not, and a person's editor of the recipe's fields, stored by
 * `upstreams.recipe_set` (checked against the pinned definitions, audited),
 * as `gatehouse upstreams recipe ID TOOL` does.
 */

const SHOWS: Record<RecipeShows, string> = {
  file_write: 'a line diff: the read returns the file, an argument holds its new text',
  file_edit: 'a line diff: the read returns the file, an argument holds edits [{oldText, newText}]',
  state: 'what the read shows now, beside the arguments',
};

interface Draft {
  tool: string;
  shows: RecipeShows;
  /** one read a line: TOOL:ARG=PATH[,ARG=PATH][@LABEL] */
  reads: string;
  content: string;
  edits: string;
  path: string;
  stat: string;
}

const draftOf = (r: PreviewRecipe): Draft => ({
  tool: r.tool,
  shows: r.shows,
  reads: (r.reads[0] ?? []).map(readSpecText).join('\n'),
  content: r.content ?? '',
  edits: r.edits ?? '',
  path: r.path ?? '',
  stat: r.stat ? readSpecText(r.stat) : '',
});

/** The recipe a draft describes, or what is wrong with it in words (the contract's own refusal). */
export function recipeOfDraft(d: Draft): { ok: true; recipe: PreviewRecipe } | { ok: false; message: string } {
  const reads: unknown[] = [];
  for (const line of d.reads.split('\n').filter((l) => l.trim())) {
    const r = parseReadSpec(line);
    if (!r.ok) return r;
    reads.push(r.read);
  }
  const stat = d.stat.trim() ? parseReadSpec(d.stat) : null;
  if (stat && !stat.ok) return stat;
  const file = d.shows !== 'state';
  const parsed = PreviewRecipe.safeParse({
    tool: d.tool,
    shows: d.shows,
    reads: reads.length ? [reads] : [],
    ...(d.shows === 'file_write' && d.content.trim() ? { content: d.content.trim() } : {}),
    ...(d.shows === 'file_edit' && d.edits.trim() ? { edits: d.edits.trim() } : {}),
    ...(file && d.path.trim() ? { path: d.path.trim() } : {}),
    ...(file && stat ? { stat: stat.read } : {}),
  });
  if (parsed.success) return { ok: true, recipe: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  return {
    ok: false,
    message: issue?.path[0] === 'reads' && !reads.length ? 'name at least one read' : `${where}${issue?.message}`,
  };
}

export function PreviewRecipes({ detail: d, onChanged }: { detail: UpstreamDetail; onChanged: () => void }) {
  const api = useApi();
  const writes = d.tool_list.filter((t) => t.class === 'write' && !t.removed).map((t) => t.tool);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [failure, setFailure] = useState<{ message: string; code: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const edit = (r: PreviewRecipe | null) => {
    setDraft(
      r ? draftOf(r) : { tool: writes[0] ?? '', shows: 'state', reads: '', content: '', edits: '', path: '', stat: '' },
    );
    setError(null);
    setFailure(null);
  };
  const run = async (call: () => ReturnType<(typeof api)['upstreams.recipes']>) => {
    setBusy(true);
    setFailure(null);
    const r = await call();
    setBusy(false);
    if (!r.ok) return setFailure(r);
    setDraft(null);
    onChanged();
  };
  const save = () => {
    const r = recipeOfDraft(draft!);
    if (!r.ok) return setError(r.message);
    setError(null);
    void run(() => api['upstreams.recipe_set']({ id: d.id, recipe: r.recipe }));
  };
  const set = (patch: Partial<Draft>) => setDraft({ ...draft!, ...patch });

  return (
    <section aria-labelledby={`recipes-${d.id}`}>
      <h3 id={`recipes-${d.id}`}>Preview recipes</h3>
      <p className="help">
        What the desk reads to show what a write will change. A preview calls only tools you classified as reads; your
        recipe for a tool takes the place of a shipped one.
      </p>
      <DataTable
        className="upstream-recipes"
        ariaLabel={`Preview recipes of ${d.id}`}
        rows={d.recipes}
        rowKey={(v) => `${v.source}:${v.tool}`}
        empty={<p>None: its writes show their arguments.</p>}
        columns={[
          { header: 'Write', cell: (v: RecipeView) => <code>{v.tool}</code> },
          {
            header: 'From',
            cell: (v) =>
              v.source === 'person' ? (v.overrides_shipped ? 'yours (instead of shipped)' : 'yours') : 'shipped',
          },
          { header: 'Reads', cell: (v) => <code>{recipeText(v.recipe).replace(/^[^:]*: /, '')}</code> },
          {
            header: 'Used',
            className: (v) => (v.problem ? 'warning' : undefined),
            cell: (v) => (v.problem ? `no: ${v.problem}` : 'yes'),
          },
          {
            header: 'Actions',
            hiddenHeader: true,
            className: 'actions',
            cell: (v) => (
              <>
                <button type="button" disabled={busy} onClick={() => edit(v.recipe)}>
                  {v.source === 'person' ? `Edit the recipe for ${v.tool}` : `Write your own for ${v.tool}`}
                </button>
                {v.source === 'person' ? (
                  <button
                    type="button"
                    disabled={busy}
                    onClick={() => void run(() => api['upstreams.recipe_remove']({ id: d.id, tool: v.tool }))}
                  >
                    Remove the recipe for {v.tool}
                  </button>
                ) : null}
              </>
            ),
          },
        ]}
      />
      {draft ? (
        <fieldset className="field recipe-editor" aria-label="Edit a preview recipe">
          <label>
            Write tool{' '}
            <select value={draft.tool} disabled={busy} onChange={(e) => set({ tool: e.target.value })}>
              {[...new Set([draft.tool, ...writes])].filter(Boolean).map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </label>
          <label>
            It shows{' '}
            <select value={draft.shows} disabled={busy} onChange={(e) => set({ shows: e.target.value as RecipeShows })}>
              {(Object.keys(SHOWS) as RecipeShows[]).map((s) => (
                <option key={s} value={s}>
                  {s}: {SHOWS[s]}
                </option>
              ))}
            </select>
          </label>
          <label>
            Reads (one a line: TOOL:ARG=PATH, more arguments after commas, @LABEL at the end)
            <textarea
              value={draft.reads}
              rows={3}
              spellCheck={false}
              disabled={busy}
              placeholder="open_nodes:names=entityNames@entities"
              onChange={(e) => set({ reads: e.target.value })}
            />
          </label>
          {draft.shows === 'file_write' ? (
            <label>
              Argument holding the new text{' '}
              <input
                value={draft.content}
                spellCheck={false}
                disabled={busy}
                onChange={(e) => set({ content: e.target.value })}
              />
            </label>
          ) : null}
          {draft.shows === 'file_edit' ? (
            <label>
              Argument holding the edits{' '}
              <input
                value={draft.edits}
                spellCheck={false}
                disabled={busy}
                onChange={(e) => set({ edits: e.target.value })}
              />
            </label>
          ) : null}
          {draft.shows !== 'state' ? (
            <>
              <label>
                Argument naming the file{' '}
                <input
                  value={draft.path}
                  spellCheck={false}
                  disabled={busy}
                  onChange={(e) => set({ path: e.target.value })}
                />
              </label>
              <label>
                Size read, asked first (optional){' '}
                <input
                  value={draft.stat}
                  spellCheck={false}
                  disabled={busy}
                  placeholder="get_file_info:path=path"
                  onChange={(e) => set({ stat: e.target.value })}
                />
              </label>
            </>
          ) : null}
          {error ? (
            <p className="field-error" role="alert">
              {error}
            </p>
          ) : null}
          <p className="help">The next staging of the tool uses it; the change is recorded in the audit log.</p>
          <div className="form-buttons">
            <button type="button" className="primary" disabled={busy} onClick={save}>
              {busy ? 'Saving…' : 'Save the recipe'}
            </button>
            <button type="button" disabled={busy} onClick={() => setDraft(null)}>
              Cancel
            </button>
          </div>
          {failure ? <ErrorBox message={failure.message} code={failure.code} /> : null}
        </fieldset>
      ) : (
        <button type="button" disabled={busy || !writes.length} onClick={() => edit(null)}>
          Add a preview recipe to {d.id}
        </button>
      )}
    </section>
  );
}
