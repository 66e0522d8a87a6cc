import { useCallback, useEffect, useRef, useState } from 'react';
import type { ErrorCode, Result } from '../../main/contract/index.ts';

export type Loaded<T> =
  { status: 'loading' } | { status: 'error'; code: ErrorCode; message: string } | { status: 'ready'; data: T };

/**
 * Load something through the Api and keep it. A reload keeps showing the
 * data it has (live updates must not flash a spinner); an answer that arrives
 * after a newer request was made is dropped. A change made while an answer is
 * on its way (a live event that arrived meanwhile) may be newer than that
 * answer, which was read before it: the answer is not shown over it, and the
 * load is asked again, so an event is never lost under a reload it raced.
 */
export function useLoad<T>(load: () => Promise<Result<T>>, deps: readonly unknown[]) {
  const [state, setState] = useState<Loaded<T>>({ status: 'loading' });
  const seq = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  /** an answer is on its way, and a change came after its request left */
  const inFlight = useRef(false);
  const changedMeanwhile = useRef(false);

  const reload = useCallback(function again() {
    const mine = ++seq.current;
    inFlight.current = true;
    changedMeanwhile.current = false;
    const settle = (next: Loaded<T>) => {
      if (mine !== seq.current) return;
      inFlight.current = false;
      if (changedMeanwhile.current) {
        // Shown only when there is nothing to show yet (the change had nothing to apply to); asked again either way.
        setState((s) => (s.status === 'ready' ? s : next));
        again();
        return;
      }
      setState(next);
    };
    loadRef.current().then(
      (result) =>
        settle(
          result.ok
            ? { status: 'ready', data: result.data }
            : { status: 'error', code: result.code, message: result.message },
        ),
      () => settle({ status: 'error', code: 'internal_error', message: 'The request failed unexpectedly.' }),
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
    if (inFlight.current) changedMeanwhile.current = true;
    setState((s) => (s.status === 'ready' ? { status: 'ready', data: change(s.data) } : s));
  }, []);

  return { state, reload, update };
}
