import { GatehouseError } from '../errors.ts';

/** How long a tool call (or a write's preview) may take unless the tool says otherwise. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;

/**
 * Runs `work` with a signal that aborts when the caller's signal does (the
 * client cancelled) or when `ms` have passed, and settles as soon as either
 * happens: a plugin that ignores its signal still cannot hold the call
 * beyond its time. What it does after that is dropped, never reported.
 */
export function withDeadline<T>(
  work: (signal: AbortSignal) => Promise<T>,
  ms: number,
  outer: AbortSignal | undefined,
  what: string,
): Promise<T> {
  if (outer?.aborted) return Promise.reject(cancelled(what));
  // One promise, one timer, one controller: this runs on every tool call.
  return new Promise<T>((resolve, reject) => {
    const ctrl = new AbortController();
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      outer?.removeEventListener('abort', onCancel);
      return true;
    };
    const stop = (e: GatehouseError) => {
      if (!settle()) return;
      ctrl.abort(e);
      reject(e);
    };
    const onCancel = () => stop(cancelled(what));
    const timer = setTimeout(
      () =>
        stop(
          new GatehouseError('timeout', `${what} took longer than ${formatMs(ms)} and was stopped`, { timeout_ms: ms }),
        ),
      ms,
    );
    outer?.addEventListener('abort', onCancel, { once: true });
    let running: Promise<T>;
    try {
      running = work(ctrl.signal);
    } catch (e) {
      running = Promise.reject(e);
    }
    running.then(
      (v) => settle() && resolve(v),
      (e: unknown) => settle() && reject(e),
    );
  });
}

const cancelled = (what: string) => new GatehouseError('cancelled', `${what} was cancelled by the client`);
const formatMs = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
