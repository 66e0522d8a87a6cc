import { useCallback, useEffect, useRef, useState } from 'react';
import type { ErrorCode, Result } from '../../main/contract/index.ts';

export type Loaded<T> =
  { status: 'loading' } | { status: 'error'; code: ErrorCode; message: string } | { status: 'ready'; data: T };

/**
 * Load something through the Api and keep it. A reload keeps showing the
 * data it has (live updates must not flash a spinner); an answer that arrives
 * after a newer request was made is dropped.
 */
export function useLoad<T>(load: () => Promise<Result<T>>, deps: readonly unknown[]) {
  const [state, setState] = useState<Loaded<T>>({ status: 'loading' });
  const seq = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  const reload = useCallback(() => {
    const mine = ++seq.current;
    loadRef.current().then(
      (result) => {
        if (mine !== seq.current) return;
        setState(
          result.ok
            ? { status: 'ready', data: result.data }
            : { status: 'error', code: result.code, message: result.message },
        );
      },
      () => {
        if (mine !== seq.current) return;
        setState({ status: 'error', code: 'internal_error', message: 'The request failed unexpectedly.' });
      },
    );
  }, []);

  useEffect(() => {
    setState({ status: 'loading' });
    reload();
    return () => {
      seq.current++;
    };
  }, deps);

  /** Change the loaded data in place (a live event, an action's answer). */
  const update = useCallback((change: (data: T) => T) => {
    setState((s) => (s.status === 'ready' ? { status: 'ready', data: change(s.data) } : s));
  }, []);

  return { state, reload, update };
}
