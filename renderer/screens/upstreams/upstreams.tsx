import { useState } from 'react';
import {
  showControlsByLine,
  type UpstreamDetail,
  type UpstreamToolView,
  type UpstreamView,
} from '../../../main/contract/index.ts';
import { DataTable } from '../../components/data-table.tsx';
import { ErrorBox, LoadState } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { useApiEvents } from '../../lib/use-events.ts';
import { useLoad } from '../../lib/use-load.ts';
import { hashFocus, useHashFocus } from '../../lib/use-hash-route.ts';
import { AddUpstream } from './add-upstream.tsx';
import { UpstreamActions } from './upstream-actions.tsx';
import { SandboxGrants } from './sandbox-grants.tsx';
import { ProcessSetting } from './process-setting.tsx';
import { ClassToggle } from './class-toggle.tsx';
import { SignIn } from './sign-in.tsx';
import { ToolConsent } from './tool-consent.tsx';
import { PendingReview, PromptTable, type ReviewActs } from './prompt-review.tsx';
import { PreviewRecipes } from './preview-recipes.tsx';
import { ViewTable } from './view-review.tsx';
import { InstructionsReview } from './instructions-review.tsx';

/**
 * Upstream MCP servers (docs/upstreams.md): each one's health and what it
 * runs (the command, arguments and environment names of a stdio server; the
 * URL and header names of an HTTP one; never a value), its tools with class,
 * state and pinned hash, its prompts and MCP App views likewise (prompt-review.tsx, view-review.tsx), the diff
 * of every quarantined definition with an Approve and a Hide button, its
 * writes' preview recipes (preview-recipes.tsx), and the last lines of its stderr; adding one
 * (add-upstream.tsx, with the person's consent twice), testing, disabling and
 * removing it.
 */
export function Upstreams() {
  const api = useApi();
  const list = useLoad(() => api['upstreams.list']({}), [api]);
  // `#upstreams/ID` (the tray's "Sign in again" item) opens that upstream's panel.
  const [open, setOpen] = useState<string | null>(hashFocus);
  useHashFocus(setOpen);
  const [adding, setAdding] = useState(false);
  useApiEvents((event) => {
    if (event.type === 'health') list.reload();
  });
  return (
    <div className="upstreams">
      {adding ? (
        <AddUpstream
          onClose={() => {
            setAdding(false);
            list.reload();
          }}
          onAdded={(id) => {
            setAdding(false);
            setOpen(id);
            list.reload();
          }}
        />
      ) : null}
      <section aria-labelledby="up-list">
        <div className="section-head">
          <h2 id="up-list">Upstream servers</h2>
          {adding ? null : (
            <button type="button" className="primary" onClick={() => setAdding(true)}>
              Add an upstream server
            </button>
          )}
        </div>
        <LoadState state={list.state} what="upstream servers" onRetry={list.reload}>
          {(rows: UpstreamView[]) =>
            rows.length === 0 ? (
              <p className="empty">
                No upstream servers. Add one here, or with{' '}
                <code>gatehouse upstreams add ID --stdio -- COMMAND ARGS</code> or <code>--url URL</code>.
              </p>
            ) : (
              <DataTable
                className="upstream-table"
                rows={rows}
                rowKey={(u) => u.id}
                columns={[
                  {
                    header: 'Server',
                    cell: (u) => (
                      <>
                        <strong>{u.id}</strong> <span className="badge">{u.kind}</span>
                      </>
                    ),
                  },
                  {
                    header: 'Status',
                    cell: (u) => (
                      <>
                        {u.health.status.replace(/_/g, ' ')}
                        {u.health.protocol ? ` (${u.health.protocol})` : ''}
                      </>
                    ),
                  },
                  {
                    header: 'Tools',
                    cell: (u) => (
                      <>
                        {u.tools.approved} approved{u.tools.quarantined ? `, ${u.tools.quarantined} to review` : ''}
                        {u.tools.hidden ? `, ${u.tools.hidden} hidden` : ''}
                        {u.prompts.quarantined ? `; ${u.prompts.quarantined} prompts to review` : ''}
                        {u.views?.approved ? `; ${u.views.approved} views` : ''}
                        {u.views?.quarantined ? `; ${u.views.quarantined} views to review` : ''}
                      </>
                    ),
                  },
                  { header: 'Restarts', cell: (u) => u.health.restarts },
                  { header: 'Last error', cell: (u) => u.health.last_error ?? '—' },
                  {
                    header: 'Details',
                    hiddenHeader: true,
                    className: 'actions',
                    cell: (u) => (
                      <button
                        type="button"
                        aria-expanded={open === u.id}
                        onClick={() => setOpen(open === u.id ? null : u.id)}
                        aria-label={`Details of ${u.id}`}
                      >
                        {open === u.id ? 'Hide details' : 'Details'}
                      </button>
                    ),
                  },
                ]}
              />
            )
          }
        </LoadState>
      </section>
      {open ? (
        <UpstreamPanel
          key={open}
          id={open}
          onChanged={list.reload}
          onRemoved={() => {
            setOpen(null);
            list.reload();
          }}
        />
      ) : null}
    </div>
  );
}

function UpstreamPanel({ id, onChanged, onRemoved }: { id: string; onChanged: () => void; onRemoved: () => void }) {
  const api = useApi();
  const detail = useLoad(() => api['upstreams.get']({ id }), [api, id]);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useApiEvents((event) => {
    if (event.type === 'health') detail.reload();
  });
  const review = async (input: ReviewActs) => {
    setBusy(true);
    setFailure(null);
    const r = await api['upstreams.review']({ id, ...input });
    setBusy(false);
    if (r.ok) detail.reload();
    else {
      setFailure(`${r.message} (${r.code})`);
      // refused because the definition moved on: show the one waiting now
      if (r.code === 'conflict') detail.reload();
    }
  };
  return (
    <section aria-labelledby="up-detail">
      <h2 id="up-detail">{id}</h2>
      {failure ? <ErrorBox message={failure} /> : null}
      <LoadState state={detail.state} what={`upstream ${id}`} onRetry={detail.reload}>
        {(d: UpstreamDetail) => (
          <>
            <UpstreamActions
              upstream={d}
              onChanged={() => {
                detail.reload();
                onChanged();
              }}
              onRemoved={onRemoved}
            />
            <dl className="upstream-how">
              {d.kind === 'stdio' ? (
                <>
                  <dt>Command</dt>
                  <dd>
                    <code>{d.command}</code>
                  </dd>
                  <dt>Arguments</dt>
                  <dd>
                    <code>{JSON.stringify(d.args)}</code>
                  </dd>
                  <dt>Environment (names only)</dt>
                  <dd>{d.env_names?.join(', ') || '—'}</dd>
                  {d.confinement ? (
                    <SandboxGrants
                      key={JSON.stringify(d.confinement)}
                      id={id}
                      command={{ command: d.command ?? '', args: d.args ?? [] }}
                      confinement={d.confinement}
                      onChanged={() => {
                        detail.reload();
                        onChanged();
                      }}
                    />
                  ) : null}
                  {d.process ? (
                    <ProcessSetting
                      id={id}
                      process={d.process}
                      onChanged={() => {
                        detail.reload();
                        onChanged();
                      }}
                    />
                  ) : null}
                </>
              ) : (
                <>
                  <dt>URL</dt>
                  <dd>
                    <code>{d.url}</code>
                  </dd>
                  <dt>Headers (names only)</dt>
                  <dd>{d.header_names?.join(', ') || '—'}</dd>
                </>
              )}
            </dl>
            {d.oauth ? <SignIn id={id} status={d.oauth} onChanged={detail.reload} /> : null}
            {/* The first listing after the first sign-in: the same consent as adding one (nothing offered until agreed). */}
            {d.awaiting_consent && d.tool_list.some((t) => t.pending && !t.removed) ? (
              <ToolConsent
                detail={d}
                onDone={() => {
                  detail.reload();
                  onChanged();
                }}
                onDropped={onRemoved}
                onReload={detail.reload}
              />
            ) : null}
            {d.problems.map((p) => (
              <p key={p} className="warning">
                Not offered: {p}
              </p>
            ))}
            <ToolTable tools={d.tool_list} busy={busy} onReview={(input) => void review(input)} />
            <PromptTable prompts={d.prompt_list} busy={busy} onReview={(input) => void review(input)} />
            <PreviewRecipes detail={d} onChanged={detail.reload} />
            <ViewTable views={d.view_list ?? []} busy={busy} onReview={(input) => void review(input)} />
            <InstructionsReview instructions={d.instructions} busy={busy} onReview={(input) => void review(input)} />
            {d.kind === 'stdio' ? (
              <details>
                <summary>Log: what the program wrote to stderr (last {d.stderr.length} lines)</summary>
                {d.stderr.length ? (
                  <pre aria-label={`stderr of ${id}`}>{showControlsByLine(d.stderr.join('\n'))}</pre>
                ) : (
                  <p className="muted">Nothing yet.</p>
                )}
              </details>
            ) : null}
          </>
        )}
      </LoadState>
    </section>
  );
}

function ToolTable({
  tools,
  busy,
  onReview,
}: {
  tools: UpstreamToolView[];
  busy: boolean;
  onReview: (input: ReviewActs) => void;
}) {
  return (
    <DataTable
      className="upstream-tools"
      rows={tools}
      rowKey={(t) => t.name}
      columns={[
        {
          header: 'Tool',
          cell: (t) => (
            <>
              <code>{t.name}</code>
              {t.removed ? <span className="badge"> removed</span> : null}
            </>
          ),
        },
        { header: 'Class', cell: (t) => t.class },
        { header: 'State', cell: (t) => t.state },
        { header: 'Definition', cell: (t) => <ToolDefinition tool={t} busy={busy} onReview={onReview} /> },
      ]}
    />
  );
}

/** A tool's pinned hash with its class toggle, "offer it again" when hidden, and the review of a waiting change. */
function ToolDefinition({
  tool: t,
  busy,
  onReview,
}: {
  tool: UpstreamToolView;
  busy: boolean;
  onReview: (input: ReviewActs) => void;
}) {
  return (
    <>
      <code title={t.hash ?? ''}>{t.hash ? `${t.hash.slice(0, 19)}…` : 'new'}</code>
      {t.removed ? null : <ClassToggle tool={t} busy={busy} onMark={(cls) => onReview({ [cls]: [t.tool] })} />}
      {t.state === 'hidden' && !t.pending && t.hash ? (
        <button
          type="button"
          className="inline-action"
          disabled={busy}
          aria-label={`Offer ${t.name} again`}
          // bound to the definition shown: one that changed since is refused as stale
          onClick={() => onReview({ consent: [{ tool: t.tool, hash: t.hash! }] })}
        >
          offer it again
        </button>
      ) : null}
      {t.pending ? (
        <PendingReview
          label={t.name}
          why={
            t.pending.reason === 'new'
              ? 'New tool'
              : t.pending.reason === 'hint_flipped'
                ? 'Its read-only hint flipped'
                : 'Its definition changed'
          }
          changes={t.pending.changes}
          busy={busy}
          onApprove={() => onReview({ consent: [{ tool: t.tool, hash: t.pending!.hash }] })}
          onHide={() => onReview({ hide: [t.tool] })}
        />
      ) : null}
    </>
  );
}
