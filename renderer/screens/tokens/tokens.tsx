import { DataTable } from '../../components/data-table.tsx';
import { useEffect, useRef, useState } from 'react';
import type { TokenCreated, TokenView, User } from '../../../main/contract/index.ts';
import { ConfirmInline } from '../../components/confirm-inline.tsx';
import { ErrorBox, LoadState } from '../../components/load-state.tsx';
import { TimeAgoCell } from '../../components/time-ago-cell.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { useApiEvents } from '../../lib/use-events.ts';
import { useLoad } from '../../lib/use-load.ts';
import { TokenCreatedPanel } from './token-created.tsx';
import { TokenForm } from './token-form.tsx';

export function Tokens() {
  const api = useApi();
  const tokens = useLoad(() => api['tokens.list']({}), [api]);
  const users = useLoad(() => api['users.list']({}), [api]);
  // The service says how a client starts the bridge here (and where secrets go); the snippets use it.
  const health = useLoad(() => api['health.get']({}), [api]);
  const [created, setCreated] = useState<TokenCreated | null>(null);
  useApiEvents((event) => {
    if (event.type === 'health' || event.type === 'audit') tokens.reload();
  });

  return (
    <div className="tokens">
      {created ? (
        <TokenCreatedPanel
          created={created}
          health={health.state.status === 'ready' ? health.state.data : null}
          onDone={() => setCreated(null)}
        />
      ) : (
        <LoadState state={users.state} what="users" onRetry={users.reload}>
          {(list: User[]) => (
            <TokenForm
              users={list}
              onCreated={(c) => {
                setCreated(c);
                tokens.update((l) => [...l.filter((t) => t.id !== c.record.id), c.record]);
              }}
            />
          )}
        </LoadState>
      )}
      <section aria-labelledby="tk-list">
        <h2 id="tk-list">Tokens</h2>
        <LoadState state={tokens.state} what="tokens" onRetry={tokens.reload}>
          {(list) => (
            <TokenTable tokens={list} onRevoked={(id) => tokens.update((l) => l.filter((t) => t.id !== id))} />
          )}
        </LoadState>
      </section>
    </div>
  );
}

function TokenTable({ tokens, onRevoked }: { tokens: TokenView[]; onRevoked: (id: string) => void }) {
  const api = useApi();
  const [asking, setAsking] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState('');
  // After Cancel, the keyboard focus goes back to the Revoke button that asked.
  const refocus = useRef<string | null>(null);
  useEffect(() => {
    if (!refocus.current) return;
    document.getElementById(`tk-revoke-${refocus.current}`)?.focus();
    refocus.current = null;
  });

  if (tokens.length === 0)
    return <p className="empty">No tokens yet. Create one above for each MCP client that should connect.</p>;

  const revoke = async (token: TokenView) => {
    setBusy(true);
    setFailure(null);
    const result = await api['tokens.revoke']({ id: token.id });
    setBusy(false);
    setAsking(null);
    if (result.ok) {
      onRevoked(token.id);
      setAnnouncement(`Revoked “${token.label}”. Clients using it are refused from now on.`);
    } else setFailure(`Could not revoke “${token.label}”: ${result.message}`);
  };

  const sorted = [...tokens].sort((a, b) => b.created.localeCompare(a.created));
  return (
    <>
      <p className="visually-hidden" role="status">
        {announcement}
      </p>
      {failure ? <ErrorBox message={failure} /> : null}
      <DataTable
        className="token-table"
        rows={sorted}
        rowKey={(t) => t.id}
        columns={[
          {
            header: 'Label',
            cell: (t) => (
              <>
                {t.label}
                {t.scope.read_only ? <span className="badge"> read only</span> : null}
                {t.scope.profile ? <span className="badge"> profile {t.scope.profile}</span> : null}
              </>
            ),
          },
          { header: 'User', cell: (t) => t.user_login ?? t.user_id },
          { header: 'Token', cell: (t) => <code>{t.preview}</code> },
          {
            header: 'Tools',
            className: 'num',
            title: () => "tools this token may see now (its user's role, its scope and profile, disabled tools)",
            cell: (t) => t.tool_count ?? '–',
          },
          { header: 'Created', ownCell: true, cell: (t) => <TimeAgoCell at={t.created} /> },
          { header: 'Last used', ownCell: true, cell: (t) => <TimeAgoCell at={t.last_used} /> },
          {
            header: 'Actions',
            hiddenHeader: true,
            className: 'actions',
            cell: (t) =>
              asking === t.id ? (
                <ConfirmInline
                  question={`Revoke “${t.label}”? Clients using it are refused at once.`}
                  confirmLabel="Revoke"
                  busy={busy}
                  onConfirm={() => void revoke(t)}
                  onCancel={() => {
                    refocus.current = t.id;
                    setAsking(null);
                  }}
                />
              ) : (
                <button
                  type="button"
                  id={`tk-revoke-${t.id}`}
                  className="danger-outline"
                  onClick={() => setAsking(t.id)}
                  aria-label={`Revoke “${t.label}”`}
                >
                  Revoke
                </button>
              ),
          },
        ]}
      />
    </>
  );
}
