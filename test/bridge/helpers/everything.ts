import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ROOT } from './bundle.ts';

/**
 * @modelcontextprotocol/server-everything over Streamable HTTP: the reference
 * server nobody here wrote. It reads its port from PORT, so a free one is
 * picked first; restart() brings it back on the same port with no memory of
 * earlier sessions, as a restarted service would.
 */

const SCRIPT = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface Everything {
  port: number;
  url: string;
  /** Everything the server printed (it logs each request and session event). */
  log(): string;
  pid(): number;
  start(): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

export async function everything(opts: { port?: number; start?: boolean } = {}): Promise<Everything> {
  const port = opts.port ?? (await freePort());
  let child: ChildProcess | undefined;
  let out = '';

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const c = spawn(process.execPath, [SCRIPT, 'streamableHttp'], {
        env: { ...process.env, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = c;
      const timer = setTimeout(() => reject(new Error(`server-everything did not start:\n${out}`)), 20_000);
      const onData = (d: Buffer) => {
        out += d.toString();
        if (out.includes(`listening on port ${port}`)) {
          clearTimeout(timer);
          resolve();
        }
      };
      c.stdout!.on('data', onData);
      c.stderr!.on('data', onData);
      c.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server-everything exited with ${code}:\n${out}`));
      });
    });

  const stop = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  };

  const e: Everything = {
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    log: () => out,
    pid: () => child?.pid ?? -1,
    start,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
  };
  if (opts.start !== false) await start();
  return e;
}
