import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway PostgreSQL cluster that a test starts, stops and starts again
 * itself (what scripts/with-postgres.sh does for a whole run): the newest
 * server binaries under /usr/lib/postgresql/*\/bin; as root, run as the
 * `postgres` user (initdb refuses root). fsync is off (the test kills the
 * server, not the machine, so the OS keeps what was written) but commits stay
 * synchronous: with synchronous_commit=off, an immediate stop loses commits
 * already acknowledged, and so would the gateway's acknowledgements.
 */
export interface PgCluster {
  url: string;
  start(): void;
  /** `pg_ctl stop -m immediate`: the server dies as in a crash */
  crash(): void;
  remove(): void;
}

export function pgBinDir(): string | null {
  try {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b));
    const bin = versions.length ? join('/usr/lib/postgresql', versions[versions.length - 1]!, 'bin') : null;
    return bin && existsSync(join(bin, 'initdb')) ? bin : null;
  } catch {
    return null;
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function createPgCluster(): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin');
  const dir = mkdtempSync(join(tmpdir(), 'gh-pg-'));
  const root = process.getuid?.() === 0;
  if (root) {
    if (spawnSync('id', ['-u', 'postgres']).status !== 0)
      execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), 0);
  }
  chmodSync(dir, 0o700);
  const run = (tool: string, args: string[]) => {
    const [cmd, all] = root ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
    const r = spawnSync(cmd, all as string[], { encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr || r.stdout}`);
  };
  const port = await freePort();
  run('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'gatehouse', '-E', 'UTF8', '--no-sync']);
  const opts = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} -c fsync=off -c full_page_writes=off`;
  const cluster: PgCluster = {
    url: `postgresql://gatehouse@127.0.0.1:${port}/postgres`,
    start: () =>
      run('pg_ctl', ['-D', join(dir, 'data'), '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', opts, 'start']),
    crash: () => run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', 'stop']),
    remove: () => {
      try {
        cluster.crash();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.start();
  return cluster;
}
