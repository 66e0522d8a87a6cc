import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';

/**
 * Vitest 4 reports a forks worker that died with "Worker exited unexpectedly"
 * and nothing else: not the file, not the signal. With
 * GATEHOUSE_WORKER_TRACE_DIR set (CI sets it), each worker writes one file
 * naming the test file it is running, removed when that file ends, so what is
 * left after a run names the file whose worker died. An exit Node saw is
 * appended with its code; a file with no such line died of a signal or a
 * native crash. `.ci/run` prints them when the tests fail.
 */
interface TraceState {
  trace: string;
  running: boolean;
}

const KEY = Symbol.for('gatehouse.worker-trace');
const dir = process.env.GATEHOUSE_WORKER_TRACE_DIR;

if (dir) {
  const state = traceState(dir);
  beforeAll(() => {
    state.running = true;
    writeFileSync(
      state.trace,
      `${new Date().toISOString()} running ${expect.getState().testPath ?? '(unknown file)'}\n`,
    );
  });
  afterAll(() => {
    state.running = false;
    rmSync(state.trace, { force: true });
  });
}

/** One state and one set of process listeners per worker process, however many files it runs. */
function traceState(dir: string): TraceState {
  const holder = process as unknown as Record<symbol, TraceState | undefined>;
  const existing = holder[KEY];
  if (existing) return existing;
  mkdirSync(dir, { recursive: true });
  const state: TraceState = { trace: join(dir, `worker-${process.pid}.txt`), running: false };
  holder[KEY] = state;
  // Only while a file runs: after it, an exit or a signal is the pool's own stop.
  const note = (line: string) => {
    if (!state.running) return;
    try {
      appendFileSync(state.trace, `${new Date().toISOString()} ${line}\n`);
    } catch {
      // the trace must never be the thing that fails a test
    }
  };
  process.on('exit', (code) => note(`exit code ${code}`));
  return state;
}
