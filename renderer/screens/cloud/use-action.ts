import { useCallback, useRef, useState } from 'react';
import type { Result } from '../../../main/contract/index.ts';
import { failureOf } from './cloud-failure.tsx';
import type { Failure } from './cloud-failure.tsx';

/**
 * One button's call into the service: busy while it runs, then either a line
 * for the status area or the failure with its request id. A second click
 * while one runs is ignored.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [done, setDone] = useState('');
  const running = useRef(false);

  const run = useCallback(async <T>(call: () => Promise<Result<T>>, said: (data: T) => string): Promise<T | null> => {
    if (running.current) return null;
    running.current = true;
    setBusy(true);
    setFailure(null);
    setDone('');
    try {
      const result = await call();
      if (!result.ok) {
        setFailure(failureOf(result));
        return null;
      }
      setDone(said(result.data));
      return result.data;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);

  const clear = useCallback(() => {
    setFailure(null);
    setDone('');
  }, []);

  return { busy, failure, done, run, clear };
}
