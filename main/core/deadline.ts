import { GatehouseError } from './errors.ts';

/** How long a tool call (or a write's preview) may take unless the tool says otherwise. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;

/**
 * Runs `work` with a signal that aborts when the caller's signal does (the
 * client cancelled) or when `ms` have passed, and settles as soon as either
 * happens: a plugin that ignores its signal still cannot hold the call
 * beyond its time. What it does after that is dropped, never reported.
 */
export async function withDeadline<T>(work: (signal: AbortSignal) => Promise<T>, ms: number, outer: AbortSignal | undefined, what: string): Promise<T> {
  if (outer?.aborted) throw cancelled(what);
  const ctrl = new AbortController();
  let stop: (e: GatehouseError) => void = () => {};
  const stopped = new Promise<never>((_, reject) => (stop = reject));
  const onCancel = () => {
    const e = cancelled(what);
    ctrl.abort(e);
    stop(e);
  };
  outer?.addEventListener('abort', onCancel, { once: true });
  const timer = setTimeout(() => {
    const e = new GatehouseError('timeout', `${what} took longer than ${formatMs(ms)} and was stopped`, { timeout_ms: ms });
    ctrl.abort(e);
    stop(e);
  }, ms);
  try {
    const running = work(ctrl.signal);
    running.catch(() => {});
    return await Promise.race([running, stopped]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onCancel);
  }
}

const cancelled = (what: string) => new GatehouseError('cancelled', `${what} was cancelled by the client`);
const formatMs = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
