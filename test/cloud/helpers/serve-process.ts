import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { TEST_MASTER_KEY } from './cloud-harness.ts';

const BIN = join(import.meta.dirname, '../../../bin/gatehouse-cloud.mjs');

export interface ServeProcess {
  child: ChildProcess;
  gateway: string;
  baseUrl: string;
  /** what the process wrote to stderr (its log) so far */
  stderr(): string;
  /** resolves with the exit code (null when killed by a signal) */
  exited: Promise<number | null>;
}

/** The real `gatehouse-cloud serve` in a child process, on a free port, rate limits off; resolves once it prints its addresses. */
export async function spawnServe(
  dataDir: string,
  extraArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'serve',
      '--port',
      '0',
      '--json',
      '--log-level',
      'warn',
      '--rate-limit-address',
      '0',
      '--rate-limit-site',
      '0',
      '--rate-limit-register',
      '0',
      ...extraArgs,
    ],
    {
      env: {
        ...process.env,
        GATEHOUSE_CLOUD_DATA_DIR: dataDir,
        GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY,
        DATABASE_URL: '',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c));
  child.stderr!.on('data', (c: Buffer) => (err += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const info = await new Promise<{ gateway_url: string; base_url: string }>((resolve, reject) => {
    const t = setInterval(() => {
      try {
        const parsed = JSON.parse(out);
        clearInterval(t);
        resolve(parsed);
      } catch {
        // not yet
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(t);
      reject(new Error(`serve exited ${code}: ${err.slice(-2000)}`));
    });
  });
  return { child, gateway: info.gateway_url, baseUrl: info.base_url, stderr: () => err, exited };
}

/** SIGTERM, then the exit code. */
export async function stopServe(p: ServeProcess): Promise<number | null> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.child.exitCode;
  p.child.kill('SIGTERM');
  return p.exited;
}
