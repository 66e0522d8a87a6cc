import { useEffect, useRef } from 'react';

/**
 * A confirmation that replaces the button that asked for it: focus moves to
 * the safe choice (Cancel), Escape cancels.
 */
export function ConfirmInline({
  question,
  confirmLabel,
  onConfirm,
  onCancel,
  busy,
}: {
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  busy?: boolean;
}) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);
  return (
    <div
      className="confirm"
      role="group"
      aria-label={question}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          onCancel();
        }
      }}
    >
      <span>{question}</span>
      <button type="button" className="danger" onClick={onConfirm} disabled={busy}>
        {confirmLabel}
      </button>
      <button type="button" ref={cancel} onClick={onCancel} disabled={busy}>
        Cancel
      </button>
    </div>
  );
}
