import { useEffect, useRef, useState } from 'react';
import { shown, type ClientId, type ClientPlanItem } from '../../../main/contract/index.ts';
import { ErrorBox, LoadState } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { useLoad } from '../../lib/use-load.ts';
import { SandboxConsent } from '../upstreams/command-consent.tsx';
import { grantsInput, ImportGrants, NO_GRANTS, type GrantText } from './import-grants.tsx';

/**
 * An import's consent, as `upstreams add` asks it: what each server will run
 * (the program, each argument, the names of its environment variables; for
 * a remote the URL and header names, never a value) before anything runs;
 * then one server at a time, each one's progress on the screen as it goes
 * (starting, N tools pinned, or its error), a failure stopping nothing.
 * A stdio server's sandbox is shown beside its command (what its command
 * line suggests and what the person grants it here), as at `upstreams add`.
 */

type Progress = { key: string; text: string; failed?: boolean };

const keyOf = (p: ClientPlanItem) => `${p.scope}:${p.server}`;

function How({ p, grants }: { p: ClientPlanItem; grants: GrantText }) {
  const h = p.how;
  const typed = grantsInput(grants);
  if (!h) return null;
  return h.kind === 'stdio' ? (
    <dl className="upstream-how">
      <dt>Program</dt>
      <dd>
        <code>{shown(h.command ?? '')}</code>
      </dd>
      <dt>Arguments</dt>
      <dd>{h.args?.length ? h.args.map((a, i) => <code key={i}>{shown(JSON.stringify(a))} </code>) : 'none'}</dd>
      <dt>Environment variables (names only)</dt>
      <dd>{h.env_names?.length ? h.env_names.join(', ') : 'none'}</dd>
      {p.placeholders.length ? (
        <>
          <dt>Kept as written</dt>
          <dd>{p.placeholders.join(', ')}</dd>
        </>
      ) : null}
      <SandboxConsent
        t={{ command: h.command ?? '', args: h.args ?? [], sandbox: typed.ok ? typed.sandbox : undefined }}
      />
    </dl>
  ) : (
    <dl className="upstream-how">
      <dt>URL</dt>
      <dd>
        <code>{shown(h.url ?? '')}</code>
        {h.sse ? ' (SSE)' : ''}
      </dd>
      <dt>Headers (names only)</dt>
      <dd>{h.header_names?.length ? h.header_names.join(', ') : 'none'}</dd>
      {h.oauth ? (
        <>
          <dt>Sign-in</dt>
          <dd>OAuth (sign in on the Upstreams screen afterwards)</dd>
        </>
      ) : null}
    </dl>
  );
}

export function ImportPlan({ client, label, onDone }: { client: ClientId; label: string; onDone: () => void }) {
  const api = useApi();
  const plan = useLoad(() => api['clients.plan']({ client }), [api, client]);
  const [chosen, setChosen] = useState<Set<string> | null>(null);
  const [progress, setProgress] = useState<Progress[]>([]);
  const [running, setRunning] = useState(false);
  const [finished, setFinished] = useState(false);
  const [grants, setGrants] = useState<Record<string, GrantText>>({});
  const [grantErrors, setGrantErrors] = useState<Record<string, string>>({});
  const grantsOf = (key: string) => grants[key] ?? NO_GRANTS;
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const run = async (items: ClientPlanItem[]) => {
    // Every server's grants are checked before the first one starts.
    const errors: Record<string, string> = {};
    const sandbox = new Map<string, ReturnType<typeof grantsInput>>();
    for (const p of items) {
      const r = grantsInput(grantsOf(keyOf(p)));
      if (!r.ok) errors[keyOf(p)] = r.error;
      sandbox.set(keyOf(p), r);
    }
    setGrantErrors(errors);
    if (Object.keys(errors).length) return;
    setRunning(true);
    for (const p of items) {
      const key = keyOf(p);
      const g = sandbox.get(key);
      const line = (text: string, failed = false) =>
        setProgress((old) => [...old.filter((x) => x.key !== key), { key, text, failed }]);
      line(`${key}: starting upstream ${p.upstream} and listing its tools…`);
      const r = await api['clients.import']({
        client,
        server: key,
        ...(g?.ok && g.sandbox ? { sandbox: g.sandbox } : {}),
      });
      if (!r.ok) line(`${key}: failed: ${r.message}`, true);
      else if (r.data.phase === 'failed') line(`${key}: failed: ${r.data.error ?? ''}`, true);
      else if (r.data.sign_in) line(`${key}: added as ${r.data.id}; sign in on the Upstreams screen`);
      else line(`${key}: ${r.data.tools ?? 0} tools pinned (upstream ${r.data.id})`);
    }
    setRunning(false);
    setFinished(true);
  };

  return (
    <section className="card consent" aria-labelledby="clients-plan">
      <h2 id="clients-plan" ref={heading} tabIndex={-1}>
        Import {label}'s servers?
      </h2>
      <LoadState state={plan.state} what={`${label}'s servers`} onRetry={plan.reload}>
        {(items: ClientPlanItem[]) => {
          const todo = items.filter((p) => !p.skip);
          const picked = chosen ?? new Set(todo.map(keyOf));
          const go = todo.filter((p) => picked.has(keyOf(p)));
          return (
            <>
              <ul className="client-plan">
                {items.map((p) => (
                  <li key={keyOf(p)}>
                    {p.skip ? (
                      <p>
                        <strong>{p.server}</strong> ({p.scope}): skipped: {p.skip}
                      </p>
                    ) : (
                      <>
                        <label>
                          <input
                            type="checkbox"
                            checked={picked.has(keyOf(p))}
                            disabled={running || finished}
                            onChange={(e) => {
                              const next = new Set(picked);
                              if (e.target.checked) next.add(keyOf(p));
                              else next.delete(keyOf(p));
                              setChosen(next);
                            }}
                          />{' '}
                          <strong>{p.server}</strong> ({p.scope}) as upstream <code>{p.upstream}</code>
                        </label>
                        <How p={p} grants={grantsOf(keyOf(p))} />
                        {p.how?.kind === 'stdio' ? (
                          <ImportGrants
                            name={keyOf(p)}
                            value={grantsOf(keyOf(p))}
                            disabled={running || finished}
                            error={grantErrors[keyOf(p)] ?? null}
                            onChange={(g) => setGrants((old) => ({ ...old, [keyOf(p)]: g }))}
                          />
                        ) : null}
                      </>
                    )}
                  </li>
                ))}
              </ul>
              {progress.length ? (
                <ol className="client-progress" aria-label="Progress" aria-live="polite">
                  {progress.map((x) => (
                    <li key={x.key} className={x.failed ? 'failed' : undefined}>
                      {x.text}
                    </li>
                  ))}
                </ol>
              ) : null}
              <div className="actions">
                {finished ? (
                  <button type="button" className="primary" onClick={onDone}>
                    Done
                  </button>
                ) : (
                  <>
                    <button
                      type="button"
                      className="primary"
                      disabled={running || go.length === 0}
                      onClick={() => void run(go)}
                    >
                      Start {go.length} {go.length === 1 ? 'server' : 'servers'}, list and pin their tools
                    </button>
                    <button type="button" disabled={running} onClick={onDone}>
                      Don't import
                    </button>
                  </>
                )}
              </div>
            </>
          );
        }}
      </LoadState>
      {plan.state.status === 'error' ? <ErrorBox message="The plan could not be made." /> : null}
    </section>
  );
}
