import { useState } from 'react';
import type { CloudConnectAnswer, CloudDisconnectAnswer, CloudStatusView } from '../../../main/contract/index.ts';
import { ConfirmInline } from '../../components/confirm-inline.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { formatDateTime, plural } from '../../lib/format.ts';
import { FailureBox, fromCloudFailure } from './cloud-failure.tsx';
import { useAction } from './use-action.ts';

/** Where this Gatehouse is connected, the key it pinned, the last sync; sync now and disconnect. */
export function ConnectionCard({
  status,
  justConnected,
  onChanged,
}: {
  status: CloudStatusView;
  justConnected: CloudConnectAnswer | null;
  onChanged: (said?: string) => void;
}) {
  const api = useApi();
  const action = useAction();
  const [confirming, setConfirming] = useState(false);

  const sync = async () => {
    await action.run(
      () => api['cloud.sync']({}),
      (a) =>
        `Synced: certificate ${a.certificate === 'accepted' ? 'renewed and verified' : 'refused (see the errors below)'}, ${plural(a.outbox.sent, 'usage event')} uploaded, ${a.outbox.remaining} waiting.`,
    );
    onChanged();
  };
  const disconnect = async () => {
    setConfirming(false);
    const said = (a: CloudDisconnectAnswer) =>
      `Disconnected${a.remote.ok ? '' : ' here only: the gateway could not be told, so its operator should remove this site'}.${a.unsent_events ? ` ${plural(a.unsent_events, 'usage event')} could not be uploaded first.` : ''}`;
    const answer = await action.run(() => api['cloud.disconnect']({}), said);
    // the screen turns into the connect form: it keeps the sentence (and the remote failure) for the person
    if (answer) onChanged(said(answer));
  };

  const pinned = status.pinned_key;
  return (
    <section className="card wide" aria-labelledby="cl-conn">
      <h2 id="cl-conn">Connection</h2>
      <p className="state-on">
        Connected to <code>{status.gateway_url}</code> ({status.environment === 'staging' ? 'staging' : 'production'}).
      </p>
      {justConnected ? <JustConnected answer={justConnected} /> : null}
      <dl className="facts">
        <dt>Site id</dt>
        <dd>
          <code>{status.site_id}</code>
        </dd>
        <dt>Pinned gateway key</dt>
        <dd>
          {pinned ? (
            <>
              <span className="fingerprint">{pinned.fingerprint}</span>
              {pinned.kid ? <span className="detail"> (key id {pinned.kid})</span> : null}
            </>
          ) : (
            <span className="state-warn">none</span>
          )}
        </dd>
        <dt>Last sync</dt>
        <dd>{status.last_sync ? formatDateTime(status.last_sync) : 'never'}</dd>
        <dt>Next refresh</dt>
        <dd>{status.next_refresh_at ? formatDateTime(status.next_refresh_at) : 'not planned'}</dd>
      </dl>
      {action.failure ? <FailureBox title="That did not work" failure={action.failure} /> : null}
      <div className="form-buttons">
        <button type="button" className="primary" onClick={sync} disabled={action.busy}>
          {action.busy ? 'Working…' : 'Sync now'}
        </button>
        {confirming ? (
          <ConfirmInline
            question="Disconnect from this cloud gateway? Paid features fall back to the free local policy."
            confirmLabel="Disconnect"
            onConfirm={disconnect}
            onCancel={() => setConfirming(false)}
            busy={action.busy}
          />
        ) : (
          <button type="button" className="danger" onClick={() => setConfirming(true)} disabled={action.busy}>
            Disconnect…
          </button>
        )}
        <span role="status" className="form-status">
          {action.done}
        </span>
      </div>
    </section>
  );
}

function JustConnected({ answer }: { answer: CloudConnectAnswer }) {
  return (
    <div className="notice">
      <p>
        {answer.pinned_key.source === 'fetched'
          ? 'The gateway’s key was fetched from the gateway and pinned. Compare its fingerprint with the one the gateway’s operator gives you; if they differ, disconnect.'
          : 'The key you gave was pinned.'}
      </p>
      <p>
        Fingerprint: <span className="fingerprint">{answer.pinned_key.fingerprint}</span>
      </p>
      {answer.first_sync.ok ? null : (
        <FailureBox
          title="The first sync failed; the connection stands and the client tries again"
          failure={fromCloudFailure(answer.first_sync)}
        />
      )}
    </div>
  );
}
