/**
 * Runs `fn` with V8 capturing no stack traces for the errors made meanwhile: for a library that makes an error on a
 * hot path only to hand it to whatever is still waiting, usually nothing, where capturing the trace is most of its
 * cost. Synchronous only: the limit is the process's, restored before anything else runs.
 */
export function withoutStackTraces<T>(fn: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return fn();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
