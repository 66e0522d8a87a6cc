import { useCallback, useEffect, useMemo, useState } from 'react';
import { AuditResult } from '../../../main/contract/index.ts';
import { shown } from '../../../main/contract/index.ts';
import type { AuditEntry, AuditPage, AuditQueryInput, TokenView } from '../../../main/contract/index.ts';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { ErrorBox, LoadState } from '../../components/load-state.tsx';
import { Switch } from '../../components/switch.tsx';
import { useApi, useConsole } from '../../lib/console-context.tsx';
import { formatDateTime } from '../../lib/format.ts';
import { useApiEvents } from '../../lib/use-events.ts';
import { useLoad } from '../../lib/use-load.ts';
import { useUserNames } from '../../lib/use-user-names.ts';
import { errorWords } from '../../lib/words.ts';
import type { ExportFormat } from '../../api/index.ts';
import { EMPTY_FILTERS, matches, toQuery } from './filters.ts';
import type { FilterForm } from './filters.ts';

const PAGE = 50;
const NO_TOKENS: readonly TokenView[] = [];

export function Activity() {
  const api = useApi();
  const users = useUserNames();
  // The token filter names tokens by label and preview, the way the console shows them everywhere else.
  const tokens = useLoad(() => api['tokens.list']({}), [api]);
  const tokenList: readonly TokenView[] = tokens.state.status === 'ready' ? tokens.state.data : NO_TOKENS;
  // stable between live entries, so the table's rows stay memoized
  const tokenLabel = useCallback((id: string) => tokenList.find((t) => t.id === id)?.label, [tokenList]);
  const [form, setForm] = useState<FilterForm>(EMPTY_FILTERS);
  const [applied, setApplied] = useState<FilterForm>(EMPTY_FILTERS);
  const [live, setLive] = useState(true);
  const query = toQuery(applied);
  const queryKey = JSON.stringify(query);
  const page = useLoad(() => api['audit.query']({ ...query, limit: PAGE }), [api, queryKey]);

  useApiEvents((event) => {
    if (!live || event.type !== 'audit' || !matches(event.entry, query)) return;
    page.update((p) =>
      p.entries.some((e) => e.id === event.entry.id) ? p : { ...p, entries: [event.entry, ...p.entries] },
    );
  });

  const set = (key: keyof FilterForm) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [key]: e.target.value }));
  return (
    <div className="activity">
      <form
        className="filters"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(form);
        }}
      >
        <div className="field">
          <label htmlFor="ac-tool">Tool</label>
          <input id="ac-tool" value={form.tool} onChange={set('tool')} />
        </div>
        <div className="field">
          <label htmlFor="ac-result">Result</label>
          <select id="ac-result" value={form.result} onChange={set('result')}>
            <option value="">any</option>
            {AuditResult.options.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="ac-user">User</label>
          <select id="ac-user" value={form.user_id} onChange={set('user_id')}>
            <option value="">any</option>
            {users.all.map(([id, login]) => (
              <option key={id} value={id}>
                {login}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="ac-token">Token</label>
          <select id="ac-token" value={form.token_id} onChange={set('token_id')}>
            <option value="">any</option>
            {tokenList.map((t) => (
              <option key={t.id} value={t.id}>
                {shown(t.label)} ({t.preview})
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="ac-plugin">Plugin</label>
          <input id="ac-plugin" value={form.plugin} onChange={set('plugin')} />
        </div>
        <div className="field">
          <label htmlFor="ac-from">From</label>
          <input id="ac-from" type="datetime-local" value={form.from} onChange={set('from')} />
        </div>
        <div className="field">
          <label htmlFor="ac-to">Until</label>
          <input id="ac-to" type="datetime-local" value={form.to} onChange={set('to')} />
        </div>
        <div className="filter-buttons">
          <button type="submit" className="primary">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              setForm(EMPTY_FILTERS);
              setApplied(EMPTY_FILTERS);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <div className="toolbar">
        <div className="live">
          <Switch checked={live} onChange={setLive} label="Live updates" />
          <span>Live updates</span>
        </div>
        <ExportLinks query={query} />
      </div>
      <LoadState state={page.state} what="the audit log" onRetry={page.reload}>
        {(data) => (
          <AuditTable
            page={data}
            query={query}
            userName={users}
            tokenLabel={tokenLabel}
            onMore={(more) =>
              page.update((p) => ({
                entries: [...p.entries, ...more.entries.filter((e) => !p.entries.some((x) => x.id === e.id))],
                next_cursor: more.next_cursor,
              }))
            }
          />
        )}
      </LoadState>
    </div>
  );
}

function ExportLinks({ query }: { query: AuditQueryInput }) {
  const env = useConsole();
  const [busy, setBusy] = useState<ExportFormat | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const save = async (format: ExportFormat) => {
    if (!env.saveExport) return;
    setBusy(format);
    setFailure(null);
    setSaved(null);
    const r = await env.saveExport(format, query);
    setBusy(null);
    if (!r.ok) return setFailure(`Export failed: ${r.message}`);
    if (r.data.path) setSaved(`Saved the whole filtered log to ${r.data.path} (${formatBytes(r.data.bytes)}).`);
  };
  return (
    <div className="export" role="group" aria-label="Export the filtered log">
      <span>Export:</span>
      {(['csv', 'jsonl'] as const).map((format) => {
        const href = env.exportHref(format, query);
        return href ? (
          <a key={format} className="button" href={href} download>
            {format.toUpperCase()}
          </a>
        ) : (
          <button key={format} type="button" onClick={() => void save(format)} disabled={busy !== null}>
            {busy === format ? 'Exporting…' : format.toUpperCase()}
          </button>
        );
      })}
      {saved ? <span role="status">{saved}</span> : null}
      {failure ? <ErrorBox message={failure} /> : null}
    </div>
  );
}

const formatBytes = (n: number): string =>
  n < 1024 ? `${n} bytes` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;

function AuditTable({
  page,
  query,
  userName,
  tokenLabel,
  onMore,
}: {
  page: AuditPage;
  query: AuditQueryInput;
  userName: (id: string | null) => string;
  tokenLabel: (id: string) => string | undefined;
  onMore: (more: AuditPage) => void;
}) {
  const api = useApi();
  const [loading, setLoading] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  useEffect(() => setFailure(null), [page]);
  const columns = useMemo(() => auditColumns(userName, tokenLabel), [userName, tokenLabel]);
  if (page.entries.length === 0)
    return (
      <p className="empty">No audit entries match. Every tool call, staged write and decision is recorded here.</p>
    );
  const more = async () => {
    if (!page.next_cursor) return;
    setLoading(true);
    const result = await api['audit.query']({ ...query, limit: PAGE, cursor: page.next_cursor });
    setLoading(false);
    if (result.ok) onMore(result.data);
    else setFailure(result.message);
  };
  return (
    <>
      <div className="table-scroll" tabIndex={0} role="region" aria-label="Audit entries">
        <DataTable className="audit" columns={columns} rows={page.entries} rowKey={(e) => e.id} />
      </div>
      {failure ? <ErrorBox message={`Could not load more: ${failure}`} /> : null}
      {page.next_cursor ? (
        <button type="button" onClick={() => void more()} disabled={loading}>
          {loading ? 'Loading…' : 'Load older entries'}
        </button>
      ) : (
        <p className="muted">That is the beginning of the log (within the retention period).</p>
      )}
    </>
  );
}

/** The audit table's columns; made once per names, so a live entry re-renders only its own row. */
function auditColumns(
  userName: (id: string | null) => string,
  tokenLabel: (id: string) => string | undefined,
): Column<AuditEntry>[] {
  return [
    { header: 'Time', cell: (e) => <time dateTime={e.at}>{formatDateTime(e.at)}</time> },
    {
      header: 'Tool',
      cell: (e) => (
        <>
          {shown(e.tool)}
          {e.write ? <span className="badge">write</span> : null}
        </>
      ),
    },
    {
      header: 'Result',
      cell: (e) => (
        <>
          <span className={`badge result-${e.result}`}>{e.result}</span>
          {e.error_code ? (
            <span className="code" title={errorWords(e.error_code)}>
              {' '}
              {e.error_code}
            </span>
          ) : null}
        </>
      ),
    },
    { header: 'User', title: (e) => e.user_id ?? undefined, cell: (e) => userName(e.user_id) },
    {
      header: 'Token',
      className: 'wrap',
      cell: (e) => {
        const token = e.token_id ? tokenLabel(e.token_id) : undefined;
        return (
          <>
            {token ? <>{shown(token)} </> : null}
            <span className={token ? 'detail' : undefined}>{e.token_preview ?? ''}</span>
          </>
        );
      },
    },
    {
      header: 'Client',
      className: 'wrap',
      cell: (e) => (
        <>
          {shown(e.client)}
          {e.client && e.client_source && e.client_source !== 'request' ? (
            <span className="detail"> (guess)</span>
          ) : null}
        </>
      ),
    },
    { header: 'Target', className: 'wrap', cell: (e) => shown(e.target) },
    { header: 'ms', className: 'num', cell: (e) => Math.round(e.duration_ms) },
  ];
}
