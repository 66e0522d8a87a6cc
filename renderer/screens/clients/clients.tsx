import { DataTable } from '../../components/data-table.tsx';
import { useState } from 'react';
import type { ClientId, ClientReportView, ClientServerView } from '../../../main/contract/index.ts';
import { ErrorBox, LoadState } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { useLoad } from '../../lib/use-load.ts';
import { ImportPlan } from './import-plan.tsx';

/**
 * MCP clients on this machine (docs/clients.md): each client's config files
 * and servers, which already go through Gatehouse, importing them (with the
 * consent of import-plan.tsx), pointing the client at Gatehouse (connect,
 * after a backup) and undoing it (restore). The same actions as `gatehouse
 * clients`; project scope is the service's current folder.
 */

const stateOf = (s: ClientServerView) =>
  s.gatehouse
    ? 'goes through Gatehouse'
    : s.imported_as
      ? `imported as upstream ${s.imported_as}`
      : s.stays
        ? `stays in the client: ${s.stays}`
        : 'not imported';
const kindOf = (s: ClientServerView) => (s.how ? (s.how.kind === 'stdio' ? 'stdio' : s.how.sse ? 'sse' : 'http') : '?');

export function Clients() {
  const api = useApi();
  const list = useLoad(() => api['clients.list']({}), [api]);
  const [importing, setImporting] = useState<ClientReportView | null>(null);
  const [said, setSaid] = useState<{ text: string[]; failed?: boolean } | null>(null);
  const [busy, setBusy] = useState(false);

  const act = async (client: ClientId, what: 'connect' | 'restore') => {
    setBusy(true);
    setSaid(null);
    const r = what === 'connect' ? await api['clients.connect']({ client }) : await api['clients.restore']({ client });
    setBusy(false);
    if (!r.ok) return setSaid({ text: [`${r.message} (${r.code})`], failed: true });
    if (what === 'connect') {
      const c = r.data as {
        files: Array<{ file: string; removed: string[]; entry_name: string; backup: string }>;
        skipped: Array<{ file: string; why: string }>;
      };
      setSaid({
        text: [
          ...c.files.map(
            (f) => `${f.file}: ${f.removed.join(', ')} replaced by “${f.entry_name}” (backup: ${f.backup})`,
          ),
          ...c.skipped.map((s) => `${s.file}: left alone: ${s.why}`),
          ...(c.files.length ? ['Restart the client to pick it up.'] : []),
        ],
      });
    } else {
      const files = r.data as Array<{ file: string; how: string; put_back: string[]; kept: string[] }>;
      setSaid({
        text: files.flatMap((f) => [
          f.how === 'bytes'
            ? `${f.file}: put back as it was before connect`
            : `${f.file}: changed since connect; put back ${f.put_back.join(', ') || 'nothing'}, Gatehouse's entry taken out`,
          ...f.kept.map((k) => `kept as the client has it: ${k}`),
        ]),
      });
    }
    list.reload();
  };

  return (
    <div className="clients">
      {importing ? (
        <ImportPlan
          client={importing.client}
          label={importing.label}
          onDone={() => {
            setImporting(null);
            list.reload();
          }}
        />
      ) : null}
      {said ? (
        said.failed ? (
          <ErrorBox message={said.text.join(' ')} />
        ) : (
          <div className="card" role="status">
            {said.text.map((t, i) => (
              <p key={i}>{t}</p>
            ))}
          </div>
        )
      ) : null}
      <section aria-labelledby="clients-list">
        <h2 id="clients-list">MCP clients on this machine</h2>
        <LoadState state={list.state} what="MCP clients" onRetry={list.reload}>
          {(reports: ClientReportView[]) => {
            const found = reports.filter((r) => r.locations.length);
            if (!found.length) return <p className="empty">No MCP client configuration found on this machine.</p>;
            return (
              <>
                {found.map((r) => {
                  const servers = r.locations.flatMap((l) => l.servers);
                  const importable = servers.some((s) => !s.gatehouse && !s.imported_as && !s.stays);
                  const imported = servers.some((s) => s.imported_as);
                  const through = servers.some((s) => s.gatehouse);
                  return (
                    <article key={r.client} className="card" aria-label={r.label}>
                      <div className="section-head">
                        <h3>{r.label}</h3>
                        <div className="actions">
                          <button type="button" disabled={busy || !importable} onClick={() => setImporting(r)}>
                            Import servers
                          </button>
                          <button
                            type="button"
                            disabled={busy || !imported}
                            onClick={() => void act(r.client, 'connect')}
                          >
                            Point {r.label} at Gatehouse
                          </button>
                          <button
                            type="button"
                            disabled={busy || !through}
                            onClick={() => void act(r.client, 'restore')}
                          >
                            Restore
                          </button>
                        </div>
                      </div>
                      {r.locations.map((l) => (
                        <div key={`${l.scope}:${l.file}`}>
                          <p>
                            {l.scope}
                            {l.read_only ? ' (managed, read-only)' : ''}: <code>{l.file}</code>
                          </p>
                          {l.error ? <ErrorBox message={l.error} /> : null}
                          {l.servers.length || !l.error ? (
                            <DataTable
                              rows={l.servers}
                              rowKey={(s) => s.name}
                              empty={<p className="empty">No servers.</p>}
                              columns={[
                                {
                                  header: 'Server',
                                  cell: (s) => (
                                    <>
                                      <strong>{s.name}</strong>
                                      {s.disabled ? ' (disabled)' : ''}
                                    </>
                                  ),
                                },
                                { header: 'Kind', cell: kindOf },
                                { header: 'State', cell: stateOf },
                              ]}
                            />
                          ) : null}
                        </div>
                      ))}
                    </article>
                  );
                })}
              </>
            );
          }}
        </LoadState>
      </section>
    </div>
  );
}
