import { useState } from 'react';
import type { UpstreamToolView } from '../../../main/contract/index.ts';
import { ConfirmInline } from '../../components/confirm-inline.tsx';

/**
 * A person's mark on one tool's class. Making a tool a read lets its calls
 * run without approval, so that is asked once more; making it a write is not.
 */
export function ClassToggle({
  tool,
  busy,
  onMark,
}: {
  tool: UpstreamToolView;
  busy: boolean;
  onMark: (cls: 'read' | 'write') => void;
}) {
  const [asking, setAsking] = useState(false);
  if (tool.class === 'read') {
    return (
      <button
        type="button"
        className="inline-action"
        disabled={busy}
        aria-label={`Make ${tool.name} a write`}
        onClick={() => onMark('write')}
      >
        make it a write
      </button>
    );
  }
  return asking ? (
    <ConfirmInline
      question={`Let calls of ${tool.name} run without your approval?`}
      confirmLabel={`Make ${tool.name} a read`}
      busy={busy}
      onConfirm={() => {
        setAsking(false);
        onMark('read');
      }}
      onCancel={() => setAsking(false)}
    />
  ) : (
    <button
      type="button"
      className="inline-action"
      disabled={busy}
      aria-label={`Make ${tool.name} a read…`}
      onClick={() => setAsking(true)}
    >
      make it a read…
    </button>
  );
}
