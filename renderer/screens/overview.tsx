import { DataTable } from '../components/data-table.tsx';
import { useState } from 'react';
import type { CloudStatusView, HealthReport } from '../../main/contract/index.ts';
import { CopyButton } from '../components/copy-button.tsx';
import { ErrorBox, LoadState } from '../components/load-state.tsx';
import { QuotaAlerts } from '../components/quota-alerts.tsx';
import { Switch } from '../components/switch.tsx';
import { WarningList } from '../components/warning-list.tsx';
import { TimeAgoCell } from '../components/time-ago-cell.tsx';
import { useApi } from '../lib/console-context.tsx';
import { formatDateTime, plural } from '../lib/format.ts';
import { useApiEvents } from '../lib/use-events.ts';
import { useLoad } from '../lib/use-load.ts';
import { shown } from '../../main/contract/index.ts';
import { certificateWords } from '../lib/cloud-words.ts';
import { cloudWords, PRODUCT_NAMES, vaultWords } from '../lib/words.ts';

export function Overview() {
  const api = useApi();
  const health = useLoad(() => api['health.get']({}), [api]);
  // the cloud card's details; when it cannot be read the card keeps to the health report's summary
  const cloud = useLoad(() => api['cloud.status']({}), [api]);
  useApiEvents((event) => {
    if (event.type === 'settings') health.update((h) => ({ ...h, enabled: event.settings.enabled }));
    health.reload();
    if (event.type === 'health') cloud.reload();
  });
  const status = cloud.state.status === 'ready' ? cloud.state.data : null;
  return (
    <LoadState state={health.state} what="the service status" onRetry={health.reload}>
      {(report) => <OverviewBody report={report} cloud={status} onChanged={health.reload} />}
    </LoadState>
  );
}

function OverviewBody({
  report,
  cloud,
  onChanged,
}: {
  report: HealthReport;
  cloud: CloudStatusView | null;
  onChanged: () => void;
}) {
  return (
    <div className="grid">
      <GatewayCard report={report} onChanged={onChanged} />
      <section className="card" aria-labelledby="ov-pending">
        <h2 id="ov-pending">Pending approvals</h2>
        <p className="big-number">{report.pending_approvals}</p>
        <p>
          {report.pending_approvals === 0 ? (
            'Nothing is waiting for you.'
          ) : (
            <a href="#approvals">Review {plural(report.pending_approvals, 'staged write')}</a>
          )}
        </p>
      </section>
      <WarningsCard report={report} />
      <ClientsCard report={report} />
      <CloudCard report={report} status={cloud} />
    </div>
  );
}

function GatewayCard({ report, onChanged }: { report: HealthReport; onChanged: () => void }) {
  const api = useApi();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const toggle = async (enabled: boolean) => {
    setBusy(true);
    setError(null);
    const result = await api['settings.update']({ enabled });
    setBusy(false);
    if (!result.ok) setError(result.message);
    onChanged();
  };
  return (
    <section className="card wide" aria-labelledby="ov-gateway">
      <div className="card-head">
        <h2 id="ov-gateway">Gateway</h2>
        <Switch
          checked={report.enabled}
          onChange={toggle}
          label="Gateway"
          disabled={busy}
          describedBy="ov-gateway-state"
        />
      </div>
      <p id="ov-gateway-state" className={report.enabled ? 'state-on' : 'state-off'}>
        {report.enabled
          ? 'On: MCP clients with a valid token can connect.'
          : 'Off: every MCP request is answered with 503 gateway_disabled.'}
      </p>
      {error ? <ErrorBox message={`Could not switch the gateway: ${error}`} /> : null}
      <dl className="facts">
        <dt>MCP endpoint</dt>
        <dd className="with-action">
          <code>{report.mcp_url}</code>
          <CopyButton text={report.mcp_url} label="Copy the MCP endpoint URL" />
        </dd>
        <dt>Secrets</dt>
        <dd className={report.vault.backend === 'file' ? 'state-warn' : undefined}>
          {vaultWords(report.vault.backend)} <span className="detail">({report.vault.label})</span>
        </dd>
        <dt>Version</dt>
        <dd>{report.version}</dd>
      </dl>
    </section>
  );
}

function WarningsCard({ report }: { report: HealthReport }) {
  return (
    <section className="card" aria-labelledby="ov-warnings">
      <h2 id="ov-warnings">Warnings</h2>
      {report.warnings.length === 0 ? (
        <p className="muted">None. Everything looks fine.</p>
      ) : (
        <WarningList warnings={report.warnings} />
      )}
    </section>
  );
}

function ClientsCard({ report }: { report: HealthReport }) {
  return (
    <section className="card wide" aria-labelledby="ov-clients">
      <h2 id="ov-clients">Clients seen recently</h2>
      <DataTable
        rows={report.recent_clients}
        rowKey={(c) => c.token_id}
        empty={
          <p className="muted">
            No client has connected yet. Create a token in <a href="#tokens">Tokens</a> and point an MCP client at the
            endpoint.
          </p>
        }
        columns={[
          { header: 'Token', cell: (c) => shown(c.label) },
          { header: 'Client', cell: (c) => (c.client ? shown(c.client) : <span className="muted">unknown</span>) },
          { header: 'Last seen', ownCell: true, cell: (c) => <TimeAgoCell at={c.last_used} /> },
        ]}
      />
    </section>
  );
}

function CloudCard({ report, status }: { report: HealthReport; status: CloudStatusView | null }) {
  const { gateway, products } = report.cloud;
  const cert = status?.connected ? status.certificate : null;
  return (
    <section className="card wide" aria-labelledby="ov-cloud">
      <h2 id="ov-cloud">Cloud, license and products</h2>
      {gateway.connected ? (
        <p className="state-on">
          Connected
          {status?.gateway_url ? (
            <>
              {' '}
              to <code>{status.gateway_url}</code>
            </>
          ) : null}
          {gateway.last_sync ? `, last sync ${formatDateTime(gateway.last_sync)}` : ''}. <a href="#cloud">Open Cloud</a>
        </p>
      ) : (
        <p className="state-off">
          Not connected. This Gatehouse is not linked to a cloud gateway, so license, entitlements and quotas come from
          the local policy. <a href="#cloud">Connect on the Cloud screen</a>
        </p>
      )}
      {status ? <QuotaAlerts alerts={status.quota_alerts} /> : null}
      <dl className="facts">
        {cert ? (
          <>
            <dt>Plan</dt>
            <dd>{cert.license.plan ?? 'none'}</dd>
            <dt>Certificate</dt>
            <dd className={cert.reason === 'ok' ? undefined : 'state-warn'}>
              {cert.reason === 'ok'
                ? `Valid until ${formatDateTime(cert.grants_until)}`
                : certificateWords(cert.reason)}
            </dd>
          </>
        ) : null}
        {status?.connected ? (
          <>
            <dt>Usage outbox</dt>
            <dd className={status.outbox.full ? 'state-warn' : undefined}>
              {status.outbox.full
                ? `Full (${status.outbox.depth} waiting)`
                : `${plural(status.outbox.depth, 'event')} waiting`}
            </dd>
          </>
        ) : null}
        {(
          [
            ['License', gateway.license],
            ['Entitlements', gateway.entitlements],
            ['Usage sync', gateway.usage],
            ['Cloud token', gateway.cloud_token],
          ] as const
        ).map(([what, value]) => (
          <Fact key={what} what={what} value={value} />
        ))}
      </dl>
      <h3>Products</h3>
      <ul className="products">
        {(Object.keys(products) as (keyof typeof products)[]).map((p) => (
          <li key={p} className={products[p] === 'active' ? 'state-on' : 'muted'}>
            <span className="product-name">{PRODUCT_NAMES[p] ?? p}</span>: {cloudWords(products[p])}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A cloud value in words, with the raw value as a detail when the words differ. */
function Fact({ what, value }: { what: string; value: string }) {
  const words = cloudWords(value);
  return (
    <>
      <dt>{what}</dt>
      <dd>
        {words}
        {words.toLowerCase() !== value ? <span className="detail"> ({value})</span> : null}
      </dd>
    </>
  );
}
