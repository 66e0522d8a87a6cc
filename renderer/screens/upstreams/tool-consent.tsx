import { useState } from 'react';
import {
  shown,
  type ToolClass,
  type UpstreamDetail,
  type UpstreamPromptView,
  type UpstreamToolView,
} from '../../../main/contract/index.ts';
import { DataTable } from '../../components/data-table.tsx';
import { ErrorBox } from '../../components/load-state.tsx';
import { asksOf } from './view-review.tsx';
import { useApi } from '../../lib/console-context.tsx';

/** A waiting prompt's argument names as listed (required ones marked). */
const argumentsOf = (p: UpstreamPromptView): string[] => {
  const args = p.pending?.changes.find((c) => c.field === 'arguments')?.after;
  return Array.isArray(args)
    ? args.map((a: { name?: unknown; required?: unknown }) => `${String(a.name)}${a.required ? ' (required)' : ''}`)
    : [];
};

/**
 * The second consent: the tools the new upstream listed, each with its class
 * (read runs at once; write is staged for approval) and definition hash, and
 * its prompts with their descriptions and arguments, its MCP App views with what each asks the host for. None
 * is offered to a client until the person agrees to this set; agreeing pins
 * exactly the definitions shown (the service refuses if one changed since).
 * "Don't add it" removes the upstream and its secrets.
 */
export function ToolConsent({
  detail,
  onDone,
  onDropped,
  onReload,
}: {
  detail: UpstreamDetail;
  onDone: () => void;
  onDropped: () => void;
  /** the set changed under the person: show the new one */
  onReload: () => void;
}) {
  const api = useApi();
  const waiting = detail.tool_list.filter((t) => t.pending && !t.removed);
  const prompts = detail.prompt_list.filter((p) => p.pending && !p.removed);
  const views = (detail.view_list ?? []).filter((v) => v.pending && !v.removed);
  // what it tells the model, consented to with the rest (clients are given it under its name)
  const instructions = detail.instructions?.pending && !detail.instructions.removed ? detail.instructions : null;
  // "N tools" as before; its prompts and views named too when it has any
  const what = `${waiting.length} tools${prompts.length ? `${views.length ? ',' : ' and'} ${prompts.length} prompts` : ''}${views.length ? ` and ${views.length} views` : ''}`;
  // Only the classes the person changed; a tool listed anew after a reload starts from its own.
  const [classes, setClasses] = useState<ReadonlyMap<string, ToolClass>>(new Map());
  const classOf = (t: UpstreamToolView) => classes.get(t.tool) ?? t.class;
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<{ message: string; code: string } | null>(null);

  const agree = async () => {
    setBusy(true);
    setFailure(null);
    // A changed class is the person's mark; an unchanged one keeps what the listing says (its hint), so a later flip comes back to review.
    const changed = waiting.filter((t) => classOf(t) !== t.class);
    const r = await api['upstreams.review']({
      id: detail.id,
      consent: waiting.map((t) => ({ tool: t.tool, hash: t.pending!.hash })),
      prompt_consent: prompts.map((p) => ({ prompt: p.prompt, hash: p.pending!.hash })),
      ...(views.length ? { view_consent: views.map((v) => ({ view: v.view, hash: v.pending!.hash })) } : {}),
      ...(instructions ? { instructions_consent: { hash: instructions.pending!.hash } } : {}),
      read: changed.filter((t) => classOf(t) === 'read').map((t) => t.tool),
      write: changed.filter((t) => classOf(t) === 'write').map((t) => t.tool),
    });
    setBusy(false);
    if (r.ok) return onDone();
    setFailure({ message: r.message, code: r.code });
    if (r.code === 'conflict') onReload();
  };
  const drop = async () => {
    setBusy(true);
    const r = await api['upstreams.remove']({ id: detail.id });
    setBusy(false);
    if (r.ok) onDropped();
    else setFailure({ message: r.message, code: r.code });
  };

  return (
    <section className="card consent" aria-labelledby="up-tools-consent">
      <h2 id="up-tools-consent">
        Offer these {what} of “{detail.id}” to your clients?
      </h2>
      <p className="help">
        Connected{detail.health.protocol ? ` (${detail.health.protocol})` : ''}. A read runs when a client calls it; a
        write waits in Approvals for you. The class comes from the tool’s own read-only hint or your Read tools; change
        it here. If a definition changes later, that tool waits for your review again.
      </p>
      {failure ? (
        <ErrorBox
          message={failure.code === 'conflict' ? `${failure.message} The list below is the new one.` : failure.message}
          code={failure.code}
        />
      ) : null}
      <DataTable
        className="upstream-tools"
        rows={waiting}
        rowKey={(t) => t.tool}
        columns={[
          { header: 'Tool', cell: (t) => <code>{shown(t.name)}</code> },
          { header: 'Description', cell: (t) => shown(t.description ?? t.title ?? '') },
          {
            header: 'Class',
            cell: (t) => (
              <select
                aria-label={`Class of ${t.name}`}
                value={classOf(t)}
                onChange={(e) => setClasses((c) => new Map(c).set(t.tool, e.target.value as ToolClass))}
              >
                <option value="read">read</option>
                <option value="write">write (staged)</option>
              </select>
            ),
          },
          { header: 'Definition', cell: (t) => <PendingHash hash={t.pending!.hash} /> },
        ]}
      />
      <DataTable
        className="upstream-tools"
        ariaLabel={`Prompts of ${detail.id}`}
        rows={prompts}
        rowKey={(p) => p.prompt}
        empty={null}
        columns={[
          { header: 'Prompt', cell: (p) => <code>{shown(p.name)}</code> },
          { header: 'Description', cell: (p) => shown(p.description ?? p.title ?? '') },
          { header: 'Arguments', cell: (p) => shown(argumentsOf(p).join(', ') || '—') },
          { header: 'Definition', cell: (p) => <PendingHash hash={p.pending!.hash} /> },
        ]}
      />
      <DataTable
        className="upstream-tools"
        ariaLabel={`Views of ${detail.id}`}
        rows={views}
        rowKey={(v) => v.view}
        empty={null}
        columns={[
          { header: 'View', cell: (v) => <code>{shown(v.name)}</code> },
          { header: 'Asks for', cell: (v) => shown(asksOf(v)) },
          { header: 'Size', cell: (v) => `${(v.size / 1024).toFixed(1)} KiB` },
          { header: 'Definition', cell: (v) => <PendingHash hash={v.pending!.hash} /> },
        ]}
      />
      {instructions ? (
        <section aria-label={`Instructions of ${detail.id}`}>
          <h3>
            Its instructions to the model{' '}
            <code title={instructions.pending!.hash}>{instructions.pending!.hash.slice(0, 19)}…</code>
          </h3>
          <pre>{shown(instructions.text)}</pre>
        </section>
      ) : null}
      <div className="form-buttons">
        <button
          type="button"
          className="primary"
          disabled={busy || waiting.length + prompts.length + views.length + (instructions ? 1 : 0) === 0}
          onClick={() => void agree()}
        >
          Offer these {what}
        </button>
        <button type="button" className="danger-outline" disabled={busy} onClick={() => void drop()}>
          Don’t add it
        </button>
      </div>
    </section>
  );
}

/** A waiting definition's hash, shortened (the whole one on hover). */
function PendingHash({ hash }: { hash: string }) {
  return <code title={hash}>{hash.slice(0, 19)}…</code>;
}
