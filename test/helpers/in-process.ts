import { format } from 'node:util';

/** What a command printed and the exit code its `main` returned (signal: always null here; the shape of a child's). */
export interface InProcessResult {
  code: number | null;
  signal: null;
  stdout: string;
  stderr: string;
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs a command's `main` (main/cli/main.ts, cloud/cli/main.ts) in this process as a child process would run it:
 * with `env` as the whole of process.env when given, and what it writes to stdout and stderr (and through
 * console) captured instead of printed. Both are this process's, so commands run one at a time, and each
 * is put back afterwards. Not for a command that reads stdin: a test worker's stdin never ends.
 */
export function inThisProcess(main: () => Promise<number>, env?: NodeJS.ProcessEnv): Promise<InProcessResult> {
  const run = () => capture(main, env);
  const result = queue.then(run, run);
  queue = result.catch(() => undefined);
  return result;
}

async function capture(main: () => Promise<number>, env: NodeJS.ProcessEnv | undefined): Promise<InProcessResult> {
  const savedEnv = new Map(
    [...new Set([...Object.keys(process.env), ...Object.keys(env ?? {})])].map((k) => [k, process.env[k]]),
  );
  const setEnv = (k: string, v: string | undefined) => (v === undefined ? delete process.env[k] : (process.env[k] = v));
  if (env) for (const k of savedEnv.keys()) setEnv(k, env[k]);
  let stdout = '';
  let stderr = '';
  const into = (append: (text: string) => void) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
      return true;
    }) as typeof process.stdout.write;
  const saved = {
    out: process.stdout.write,
    err: process.stderr.write,
    log: console.log,
    error: console.error,
    warn: console.warn,
  };
  process.stdout.write = into((t) => (stdout += t));
  process.stderr.write = into((t) => (stderr += t));
  console.log = (...a: unknown[]) => void (stdout += `${format(...a)}\n`);
  console.error = console.warn = (...a: unknown[]) => void (stderr += `${format(...a)}\n`);
  try {
    const code = await main();
    return { code, signal: null, stdout, stderr };
  } finally {
    Object.assign(process.stdout, { write: saved.out });
    Object.assign(process.stderr, { write: saved.err });
    Object.assign(console, { log: saved.log, error: saved.error, warn: saved.warn });
    if (env) for (const [k, v] of savedEnv) setEnv(k, v);
  }
}
