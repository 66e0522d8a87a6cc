import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { ensureCliBundle } from '../bridge/helpers/bundle.ts';
import { inThisProcess } from '../helpers/in-process.ts';

/**
 * Runs the real `gatehouse` command (bin/gatehouse.cjs, the built bundle) as
 * child processes, each against its own temp data dir.
 */

// The bin prefers dist/cli/: rebuild it when the sources are newer, so no test runs stale code.
await ensureCliBundle();

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin/gatehouse.cjs');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The child's environment: ours, minus anything that could point it at another data dir. */
function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  if (!('GATEHOUSE_DATA_DIR' in extra)) delete env.GATEHOUSE_DATA_DIR;
  return env;
}

export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [BIN, ...args], { cwd: REPO, env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
}

export function collect(child: ChildProcessWithoutNullStreams): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** How a test runs one command: as a child process (`runCli`) or in the test's own process (`runCliHere`). */
export type CliRunner = (args: string[], env?: NodeJS.ProcessEnv) => Promise<CliResult>;

/** One CLI command to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const child = spawnCli(args, env);
  child.stdin.end();
  return collect(child);
}

/**
 * One CLI command to completion in this process: the same `main` as bin/gatehouse.cjs runs (main/cli/main.ts),
 * with the child's environment, its stdout and stderr captured, and its exit code as `main` returns it. For
 * what a command does and answers; what only a process shows (the exit status the OS sees, stdin, signals,
 * two processes on one lock) stays with `runCli`. Not for commands that read stdin (test/helpers/in-process.ts).
 */
export const runCliHere: CliRunner = (args, env = {}) =>
  inThisProcess(async () => (await import('../../main/cli/main.ts')).main(args), childEnv(env));

/** A data dir of our own, with the file vault (the keychain has its own test file). */
export function dirArgs(dataDir: string): string[] {
  return ['--data-dir', dataDir, '--vault', 'file'];
}

/** `--json` command that must succeed: returns the parsed stdout. */
export async function cliJson<T = unknown>(
  dataDir: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  run: CliRunner = runCli,
): Promise<T> {
  const r = await run([...args, ...dirArgs(dataDir), '--json'], env);
  if (r.code !== 0)
    throw new Error(
      `gatehouse ${args.join(' ')} exited ${r.code ?? r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`,
    );
  return JSON.parse(r.stdout) as T;
}

/** `--json` command that must fail: exit code, the JSON error from stderr, and an empty stdout. */
export async function cliJsonError(
  dataDir: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  run: CliRunner = runCli,
): Promise<{ exit: number | null; code: string; message: string; stderr: string }> {
  const r = await run([...args, ...dirArgs(dataDir), '--json'], env);
  expect(r.code, `gatehouse ${args.join(' ')} should fail; stdout: ${r.stdout}`).not.toBe(0);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trim().split('\n');
  // The error is the last stderr line (a warning may precede it).
  const err = JSON.parse(lines[lines.length - 1]!) as { ok: boolean; code: string; message: string };
  expect(err.ok).toBe(false);
  expect(typeof err.code).toBe('string');
  expect(typeof err.message).toBe('string');
  return { exit: r.code, code: err.code, message: err.message, stderr: r.stderr };
}

export async function tempDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'gatehouse-cli-'));
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

/**
 * One data dir for a whole test file, used first by commands on the files and
 * then by a service the file starts (`w.serve()`); both are cleaned up after
 * all its tests.
 */
export function sharedDataDir(): { readonly dir: string; serve(): Promise<Served> } {
  let dir = '';
  let served: Served | null = null;
  beforeAll(async () => {
    dir = await tempDataDir();
  }, 60_000);
  afterAll(async () => {
    await served?.stop('SIGKILL');
    await removeDir(dir);
  });
  return {
    get dir() {
      return dir;
    },
    serve: async () => (served = await startServe(dir)),
  };
}

export interface ServeInfo {
  base_url: string;
  mcp_url: string;
  console_login_url: string;
  data_dir: string;
  vault: string;
  enabled: boolean;
  pid: number;
  /** data that had to be salvaged or moved aside at start */
  warnings?: Array<{ code: string; message: string }>;
}

export interface Served {
  child: ChildProcessWithoutNullStreams;
  info: ServeInfo;
  stderr: () => string;
  /** Sends `signal` and resolves with the exit, or kills it after 5 s and reports that. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }>;
}

/** `gatehouse serve --port 0 --enable --json`, resolved once it has printed its addresses. */
export async function startServe(
  dataDir: string,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
  vaultArgs = ['--vault', 'file'],
): Promise<Served> {
  const child = spawnCli(
    ['serve', '--port', '0', '--enable', '--json', '--data-dir', dataDir, ...vaultArgs, ...extra],
    env,
  );
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const info = await new Promise<ServeInfo>((resolve, reject) => {
    // --json prints one pretty-printed object: done when the text so far parses.
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
      try {
        resolve(JSON.parse(stdout) as ServeInfo);
      } catch {
        // not complete yet
      }
    });
    void exit.then(({ code, signal }) =>
      reject(
        new Error(
          `serve exited (${code ?? signal}) before printing its addresses\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      ),
    );
  });
  let stopped: ReturnType<Served['stop']> | null = null;
  return {
    child,
    info,
    stderr: () => stderr,
    stop(signal: NodeJS.Signals = 'SIGTERM') {
      stopped ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return { ...(await exit), killed: false };
        let killed = false;
        const timer = setTimeout(() => {
          killed = true;
          child.kill('SIGKILL');
        }, 5_000);
        child.kill(signal);
        const r = await exit;
        clearTimeout(timer);
        return { ...r, killed };
      })();
      return stopped;
    },
  };
}

/** Every file under `dir`, recursively. */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** Files under `dir` whose bytes contain `needle` (compared as raw bytes, so any text encoding of the same characters counts). */
export async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  const bytes = Buffer.from(needle, 'utf8');
  for (const f of await filesUnder(dir)) {
    // a temp file of an atomic write (the policy memo's, a store's) may be renamed away between the listing and the read
    const body = await readFile(f).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return null;
      throw e;
    });
    if (body?.includes(bytes)) hits.push(f);
  }
  return hits;
}

/** Grep the whole data dir for a clear token: neither the token nor its random part may appear anywhere. */
export async function expectTokenInNoFile(dataDir: string, token: string): Promise<void> {
  const files = await filesUnder(dataDir);
  expect(files.length).toBeGreaterThan(0);
  expect(await filesContaining(dataDir, token)).toEqual([]);
  expect(await filesContaining(dataDir, token.slice('gth_'.length))).toEqual([]);
}

export const TOKEN_RE = /^gth_[A-Za-z0-9_-]{43}$/;

/** Like Promise.all over `items`, with at most `limit` child processes at a time (two cores). */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Temp data dirs and `serve` children that clean themselves up: every serve
 * is killed after each test, every dir removed after the file.
 */
export function cleanedUp() {
  const dirs: string[] = [];
  const running: Served[] = [];
  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop('SIGKILL');
  });
  afterAll(async () => {
    for (const d of dirs.splice(0)) await removeDir(d);
  });
  return {
    async dir(): Promise<string> {
      const dir = await tempDataDir();
      dirs.push(dir);
      return dir;
    },
    async serve(
      dir: string,
      ...rest: Parameters<typeof startServe> extends [string, ...infer R] ? R : never
    ): Promise<Served> {
      const svc = await startServe(dir, ...rest);
      running.push(svc);
      return svc;
    },
  };
}

/** `runCli`, `cliJson` and `cliJsonError` with each command run in this process (`runCliHere`). */
export const here = {
  runCli: runCliHere,
  cliJson: <T = unknown>(dataDir: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    cliJson<T>(dataDir, args, env, runCliHere),
  cliJsonError: (dataDir: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    cliJsonError(dataDir, args, env, runCliHere),
};
