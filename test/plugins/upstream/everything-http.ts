import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { EVERYTHING } from './upstream-world.ts';

/** A free TCP port on 127.0.0.1 (for a server that takes its port from the environment). */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

/** server-everything's own Streamable HTTP mode (`node dist/index.js streamableHttp`, PORT from the environment), until `stop`. */
export async function startEverythingHttp(port: number): Promise<{ stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => c.toString().includes('listening on port') && resolve());
    child.once('exit', (code) => reject(new Error(`server-everything exited ${code}`)));
  });
  return {
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
