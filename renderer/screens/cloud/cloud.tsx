import { useState } from 'react';
import type { CloudConnectAnswer, CloudStatusView } from '../../../main/contract/index.ts';
import { LoadState } from '../../components/load-state.tsx';
import { QuotaAlerts } from '../../components/quota-alerts.tsx';
import { WarningList } from '../../components/warning-list.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { useApiEvents } from '../../lib/use-events.ts';
import { useLoad } from '../../lib/use-load.ts';
import { ConnectForm } from './connect-form.tsx';
import { ConnectionCard } from './connection-card.tsx';
import { LicenseCard } from './license-card.tsx';
import { CertificateCard, OutboxCard, ProblemsCard, ProductsCard } from './status-cards.tsx';
import { UpdatesCard } from './updates-card.tsx';

/**
 * The Cloud screen: connect to a cloud gateway, activate a license, and see
 * why things are the way they are (certificate, outbox, breaker, errors with
 * their request ids). It reads `cloud.status` (no network) and reloads on the
 * service's `health` event, which follows every cloud state change.
 */
export function Cloud() {
  const api = useApi();
  const status = useLoad(() => api['cloud.status']({}), [api]);
  const [connected, setConnected] = useState<CloudConnectAnswer | null>(null);
  const [said, setSaid] = useState('');
  useApiEvents((event) => {
    if (event.type === 'health') status.reload();
  });
  const changed = (sentence?: string) => {
    if (sentence) setSaid(sentence);
    status.reload();
  };
  return (
    <>
      {said ? (
        <p className="notice" role="status">
          {said}
        </p>
      ) : null}
      <LoadState state={status.state} what="the cloud connection" onRetry={status.reload}>
        {(s) =>
          s.connected ? (
            <Connected status={s} justConnected={connected} onChanged={changed} />
          ) : (
            <ConnectForm
              onConnected={(answer) => {
                setConnected(answer);
                setSaid('');
                status.reload();
              }}
            />
          )
        }
      </LoadState>
    </>
  );
}

function Connected({
  status,
  justConnected,
  onChanged,
}: {
  status: CloudStatusView;
  justConnected: CloudConnectAnswer | null;
  onChanged: (said?: string) => void;
}) {
  return (
    <div className="grid cloud">
      {status.quota_alerts.length || status.warnings.length ? (
        <section className="card wide" aria-labelledby="cl-warnings">
          <h2 id="cl-warnings">Needs attention</h2>
          <QuotaAlerts alerts={status.quota_alerts} />
          {status.warnings.length ? <WarningList warnings={status.warnings} /> : null}
        </section>
      ) : null}
      <ConnectionCard status={status} justConnected={justConnected} onChanged={onChanged} />
      <LicenseCard status={status} onChanged={onChanged} />
      <CertificateCard status={status} />
      <ProductsCard status={status} />
      <OutboxCard status={status} />
      <UpdatesCard />
      <ProblemsCard status={status} />
    </div>
  );
}
