import type { ReactNode } from 'react';
import type { Loaded } from '../lib/use-load.ts';

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted loading" role="status">
      Loading {what}…
    </p>
  );
}

export function ErrorBox({ message, code, onRetry }: { message: string; code?: string; onRetry?: () => void }) {
  return (
    <div className="error-box" role="alert">
      <p>
        {message}
        {code ? <span className="code"> ({code})</span> : null}
      </p>
      {onRetry ? (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** Loading and error states of a `useLoad`; renders `children(data)` once ready. */
export function LoadState<T>({
  state,
  what,
  onRetry,
  children,
}: {
  state: Loaded<T>;
  what: string;
  onRetry: () => void;
  children: (data: T) => ReactNode;
}) {
  if (state.status === 'loading') return <Loading what={what} />;
  if (state.status === 'error')
    return <ErrorBox message={`Could not load ${what}: ${state.message}`} code={state.code} onRetry={onRetry} />;
  return <>{children(state.data)}</>;
}
