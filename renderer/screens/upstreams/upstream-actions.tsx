import { useState } from 'react';
import type { UpstreamView } from '../../../main/contract/index.ts';
import { ConfirmInline } from '../../components/confirm-inline.tsx';
import { ErrorBox } from '../../components/load-state.tsx';
import { useApi } from '../../lib/console-context.tsx';

/** Test, disable or enable, and remove one upstream; each answer is said in words, a failure with its code. */
export function UpstreamActions({
  upstream,
  onChanged,
  onRemoved,
}: {
  upstream: UpstreamView;
  onChanged: () => void;
  onRemoved: () => void;
}) {
  const api = useApi();
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<string | null>(null);
  const [failure, setFailure] = useState<{ message: string; code: string } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const { id } = upstream;

  const act = async (what: 'test' | 'toggle' | 'remove') => {
    setBusy(true);
    setSaid(null);
    setFailure(null);
    if (what === 'test') {
      const r = await api['upstreams.test']({ id });
      if (!r.ok) setFailure(r);
      else if (r.data.ok)
        setSaid(
          `${id} answered: ${r.data.tools} tools, ${r.data.protocol ?? 'protocol unknown'}, ${r.data.latency_ms} ms.`,
        );
      else
        setFailure({
          message: `${id} did not answer: ${r.data.error ?? 'no reason given'}`,
          code: 'upstream_unavailable',
        });
      onChanged();
    } else if (what === 'toggle') {
      const r = await api[upstream.enabled ? 'upstreams.disable' : 'upstreams.enable']({ id });
      if (r.ok)
        setSaid(
          r.data.enabled
            ? `${id} is enabled: its approved tools are offered again.`
            : `${id} is disabled: its tools are offered to no client.`,
        );
      else setFailure(r);
      onChanged();
    } else {
      const r = await api['upstreams.remove']({ id });
      setConfirming(false);
      if (r.ok) return onRemoved();
      setFailure(r);
    }
    setBusy(false);
  };

  return (
    <div className="upstream-actions">
      <div className="form-buttons">
        <button type="button" disabled={busy || !upstream.enabled} onClick={() => void act('test')}>
          Test {id}
        </button>
        <button type="button" disabled={busy} onClick={() => void act('toggle')}>
          {upstream.enabled ? `Disable ${id}` : `Enable ${id}`}
        </button>
        {confirming ? (
          <ConfirmInline
            question={`Remove ${id}? Its tools go away and its secrets are deleted from the vault.`}
            confirmLabel={`Remove ${id}`}
            busy={busy}
            onConfirm={() => void act('remove')}
            onCancel={() => setConfirming(false)}
          />
        ) : (
          <button type="button" className="danger-outline" disabled={busy} onClick={() => setConfirming(true)}>
            Remove {id}…
          </button>
        )}
      </div>
      <p role="status" className="form-status">
        {said}
      </p>
      {failure ? <ErrorBox message={failure.message} code={failure.code} /> : null}
    </div>
  );
}
