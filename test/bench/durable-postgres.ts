/**
 * A throwaway PostgreSQL cluster with durable settings (fsync, synchronous_commit
 * and full_page_writes on: the server's defaults), for benchmarks that must pay
 * for commits as production does. scripts/with-postgres.sh's cluster is tuned for
 * tests (fsync off) and would flatter every write.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Cluster {
  url: string;
  stop(): void;
}

function serverBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const v = readdirSync(root)
    .sort((a, b) => Number(a) - Number(b))
    .at(-1);
  return v && existsSync(join(root, v, 'bin', 'initdb')) ? join(root, v, 'bin') : null;
}

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** Starts the cluster, or answers null when no server binaries are installed. */
export async function startDurablePostgres(): Promise<Cluster | null> {
  const bin = serverBin();
  if (!bin) return null;
  const dir = mkdtempSync(join(tmpdir(), 'gh-durable-pg-'));
  const root = process.getuid?.() === 0;
  if (root) {
    if (spawnSync('id', ['-u', 'postgres']).status !== 0)
      execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), 0);
  }
  const run = (cmd: string, args: string[]) =>
    root
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { stdio: 'pipe' })
      : execFileSync(join(bin, cmd), args, { stdio: 'pipe' });
  const port = await freePort();
  run('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'gatehouse', '-E', 'UTF8']);
  const opts = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} -c fsync=on -c synchronous_commit=on -c full_page_writes=on -c max_connections=100`;
  run('pg_ctl', ['-D', join(dir, 'data'), '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', opts, 'start']);
  return {
    url: `postgresql://gatehouse@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
