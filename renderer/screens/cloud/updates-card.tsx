import type { UpdatesView } from '../../../main/contract/index.ts';
import { LoadState } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';
import { formatDateTime } from '../../lib/format.ts';
import { useApiEvents } from '../../lib/use-events.ts';
import { useLoad } from '../../lib/use-load.ts';
import { FailureBox, FailureText, fromCloudFailure } from './cloud-failure.tsx';
import { useAction } from './use-action.ts';

/**
 * The update channel and the newest release the gateway offers (only once its
 * signed manifest verified against the pinned key). Installing is the desktop
 * app's, after it verified the downloaded file too; the console never installs.
 */
export function UpdatesCard() {
  const api = useApi();
  const updates = useLoad(() => api['updates.status']({}), [api]);
  const action = useAction();
  useApiEvents((event) => {
    if (event.type === 'health') updates.reload();
  });
  const check = async () => {
    const view = await action.run(
      () => api['updates.check']({}),
      (v) => (v.error ? '' : v.update_available ? `Version ${v.latest_version} is available.` : 'No newer version.'),
    );
    if (view) updates.update(() => view);
  };
  return (
    <section className="card" aria-labelledby="cl-updates">
      <h2 id="cl-updates">Updates</h2>
      <LoadState state={updates.state} what="the update status" onRetry={updates.reload}>
        {(v) => <UpdatesFacts view={v} />}
      </LoadState>
      {action.failure ? <FailureBox title="Could not check for updates" failure={action.failure} /> : null}
      <div className="form-buttons">
        <button type="button" onClick={check} disabled={action.busy}>
          {action.busy ? 'Checking…' : 'Check for updates'}
        </button>
        <span role="status" className="form-status">
          {action.done}
        </span>
      </div>
    </section>
  );
}

function UpdatesFacts({ view: v }: { view: UpdatesView }) {
  return (
    <>
      <dl className="facts">
        <dt>This version</dt>
        <dd>{v.current_version}</dd>
        <dt>Channel</dt>
        <dd>
          {v.channel ?? "not checked yet (the license's channel is under Certificate)"}
          {v.eligible === false ? <span className="state-warn"> (not included in the license)</span> : null}
        </dd>
        <dt>Latest version</dt>
        <dd className={v.update_available ? 'state-on' : undefined}>
          {v.latest_version
            ? `${v.latest_version}${v.update_available ? ' (available)' : ''}`
            : v.checked_at
              ? 'none newer'
              : 'not checked yet'}
          {v.release ? <span className="detail"> · released {formatDateTime(v.release.released_at)}</span> : null}
        </dd>
        <dt>Last check</dt>
        <dd>{v.checked_at ? formatDateTime(v.checked_at) : 'never'}</dd>
      </dl>
      {v.update_available ? (
        <p className="muted">
          The desktop app downloads it, checks the file against the signed manifest, and asks you before installing.
        </p>
      ) : null}
      {v.refused ? <p className="state-warn">Not offered: {v.refused}</p> : null}
      {v.error ? (
        <p className="state-warn">
          The last check failed. <FailureText failure={fromCloudFailure(v.error)} />
        </p>
      ) : null}
    </>
  );
}
