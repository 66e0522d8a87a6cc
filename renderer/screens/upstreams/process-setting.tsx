import { useState } from 'react';
import type { UpstreamProcessView } from '../../../main/contract/index.ts';
import { ErrorBox } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';

/**
 * How a stdio upstream's processes run (docs/upstreams.md, "One process per client"): one for every agent,
 * or one per client token, switched through `upstreams.process` (audited; the server restarts). A server
 * known to keep state per agent that shares one says why one each would suit it.
 */
export function ProcessSetting({
  id,
  process: p,
  onChanged,
}: {
  id: string;
  process: UpstreamProcessView;
  onChanged: () => void;
}) {
  const api = useApi();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<{ message: string; code: string } | null>(null);
  const perClient = p.mode === 'per-client';
  const flip = async () => {
    setBusy(true);
    setFailure(null);
    const r = await api['upstreams.process']({ id, mode: perClient ? 'shared' : 'per-client' });
    setBusy(false);
    if (!r.ok) return setFailure(r);
    onChanged();
  };
  return (
    <>
      <dt>Processes</dt>
      <dd>
        {perClient
          ? `One per client token: at most ${p.max} at once, each stopped after ${Math.round(p.idle_ms / 60_000)} min without a call; ${p.running} running.`
          : 'One, shared by every client.'}
        {p.suggestion ? <p className="help">Suggested: {p.suggestion.replace(/; give it .*$/, '')}.</p> : null}
        <button type="button" disabled={busy} onClick={() => void flip()}>
          {perClient ? 'Share one process' : 'One process per client'}
        </button>
        {failure ? <ErrorBox message={failure.message} code={failure.code} /> : null}
      </dd>
    </>
  );
}
