import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const CLOUD_BIN = join(import.meta.dirname, '../../../bin/gatehouse-cloud.mjs');

/** `gatehouse-cloud serve --port 0 --json ...args` as a child, once it has printed its addresses; what it logs is kept. */
export async function spawnServe(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; gateway: string; log: () => string }> {
  const child = spawn(process.execPath, [CLOUD_BIN, 'serve', '--port', '0', '--json', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let log = '';
  child.stdout!.on('data', (c: Buffer) => (out += c));
  child.stderr!.on('data', (c: Buffer) => (log += c));
  const gateway = await new Promise<string>((resolve, reject) => {
    const t = setInterval(() => {
      try {
        resolve(JSON.parse(out).gateway_url);
        clearInterval(t);
      } catch {
        // not yet
      }
    }, 100);
    child.once('exit', (code) => (clearInterval(t), reject(new Error(`serve exited ${code}: ${log.slice(-500)}`))));
  });
  return { child, gateway, log: () => log };
}
