import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { callOperatorSocket } from '../../../cloud/operator-rpc.ts';
import { readRuntime } from '../../../cloud/runtime.ts';
import { TEST_MASTER_KEY } from '../../cloud/helpers/cloud-harness.ts';
import { bundledScript } from '../../helpers/bundled-script.ts';

/**
 * The reference gateway as its own process (`gatehouse-cloud serve` from the
 * sources, embedded PGlite in a data dir), so a test can kill it with
 * SIGKILL and start it again on the same data.
 */
const CLI = fileURLToPath(new URL('../../../cloud/cli.ts', import.meta.url));

export interface CloudChild {
  url: string;
  proc: ChildProcess;
  op<T = unknown>(command: string, args?: Record<string, unknown>): Promise<T>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export async function startCloudChild(dataDir: string): Promise<CloudChild> {
  const proc = spawn(
    process.execPath,
    [
      bundledScript(CLI),
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--json',
      '--rate-limit-address',
      '0',
      '--rate-limit-site',
      '0',
      '--rate-limit-register',
      '0',
    ],
    {
      // The embedded database always (the PostgreSQL pass of .ci/run sets DATABASE_URL for everything else).
      env: {
        ...process.env,
        GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY,
        GATEHOUSE_LOG_LEVEL: 'error',
        DATABASE_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err = (err + String(c)).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`gatehouse-cloud did not start: ${err}`)), 120_000);
    proc.stdout!.on('data', (c: Buffer) => {
      out += String(c);
      const m = /"base_url":\s*"([^"]+)"/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`gatehouse-cloud exited (${code}): ${err}`));
    });
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    url,
    proc,
    op: async (command, args = {}) => {
      const rt = await readRuntime(dataDir);
      if (!rt?.operator_socket || !rt.operator_token) throw new Error('no operator socket in runtime.json');
      return callOperatorSocket(rt.operator_socket, rt.operator_token, command, args) as never;
    },
    kill: async () => {
      proc.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}
