import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { collect, REPO, type CliResult } from '../cli/cli-harness.ts';
import type { ClientHome } from './client-homes.ts';

/**
 * `gatehouse clients ...` as a person runs it: the real bin, in the project
 * folder (project scope = the current directory), with the test's HOME, on
 * the data dir of the running test service (so through its admin API).
 * `onLine` sees stdout line by line as it comes, for the progress tests.
 */
export function runClients(
  h: ClientHome,
  dataDir: string,
  args: string[],
  onLine?: (line: string) => void,
): Promise<CliResult> {
  const child = spawn(
    process.execPath,
    [join(REPO, 'bin/gatehouse.cjs'), 'clients', ...args, '--data-dir', dataDir, '--vault', 'file'],
    { cwd: h.project, env: { ...process.env, ...h.env, GATEHOUSE_DATA_DIR: '' }, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  child.stdin.end();
  if (onLine) {
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString('utf8');
      for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
        onLine(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    });
  }
  return collect(child);
}
