import { spawn, type ChildProcess } from 'node:child_process';

/**
 * `gatehouse serve --json` in a child process, timed to its printed addresses (ready): the start-up and growth
 * benchmarks' way to start the service. `argv` is what comes before `serve` (the bin, or tsx and the source).
 */
export async function serveChild(
  argv: string[],
  dataDir: string,
  opts: { env: NodeJS.ProcessEnv; cwd: string },
): Promise<{ child: ChildProcess; readyMs: number; mcpUrl: string; stop(): Promise<void> }> {
  const t = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [...argv, 'serve', '--port', '0', '--json', '--data-dir', dataDir, '--vault', 'file'],
    { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let out = '';
  const ready = await new Promise<{ readyMs: number; mcpUrl: string }>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      try {
        const info = JSON.parse(out) as { mcp_url: string };
        resolve({ readyMs: Number(process.hrtime.bigint() - t) / 1e6, mcpUrl: info.mcp_url });
      } catch {
        // not the whole object yet
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code} before it was ready`)));
  });
  return {
    child,
    ...ready,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
