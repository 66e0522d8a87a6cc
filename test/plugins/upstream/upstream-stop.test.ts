import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, dirArgs, REPO, runCli, startServe, type Served } from '../../cli/cli-harness.ts';
import { TEST_UPSTREAM, until } from './upstream-world.ts';

/**
 * An upstream that will not stop: it storms
 * notifications/tools/list_changed, ignores SIGTERM and the end of its
 * stdin, and has a child of its own. A real `gatehouse serve` with it
 * running is sent SIGTERM or SIGINT: the stop exits 0 within its time and
 * no process of the upstream's group is left. And a process that dies of
 * an uncaught error takes its upstreams' groups with it.
 */
const STORM_UPSTREAM = join(REPO, 'test/fixtures/upstream/storm-upstream.mjs');
let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'gh-upstop-'));
});
afterAll(async () => {
  for (const pid of await groupMembersOf(leaders)) killQuietly(pid);
  await rm(work, { recursive: true, force: true });
});
const leaders: number[] = [];

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** Live (not zombie) processes whose process group is one of `groups`, from /proc. */
async function groupMembersOf(groups: readonly number[]): Promise<number[]> {
  const out: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so read after its closing parenthesis
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state && state !== 'Z' && groups.includes(Number(pgrp))) out.push(Number(name));
  }
  return out;
}

const alive = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
};

async function stormingUpstream(dir: string): Promise<{ pids: string; storm: string }> {
  const pids = join(work, `pids-${Math.random().toString(36).slice(2)}`);
  const storm = `${pids}.storm`;
  const added = await runCli([
    'upstreams',
    'add',
    'storm',
    '--stdio',
    '--unconfined',
    '--env',
    `PIDS=${pids}`,
    '--env',
    `STORM=${storm}`,
    ...dirArgs(dir),
    '--json',
    '--',
    process.execPath,
    STORM_UPSTREAM,
  ]);
  expect(added.code, added.stderr).toBe(0);
  await writeFile(storm, '');
  return { pids, storm };
}

async function stormPids(file: string): Promise<number[]> {
  let pids: number[] = [];
  await until(
    async () => {
      pids = (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
      return pids.length >= 2;
    },
    30_000,
    'the upstream to storm and name its pids',
  );
  return pids;
}

describe.each(['SIGTERM', 'SIGINT'] as const)('a service stopped by %s with a storming upstream', (signal) => {
  let served: Served | null = null;
  afterAll(async () => {
    await served?.stop('SIGKILL');
  });

  it('exits 0 and leaves no process of the upstream behind', async () => {
    const dir = await mkdtemp(join(work, 'data-'));
    const { pids: pidFile } = await stormingUpstream(dir);
    served = await startServe(dir);
    const [upstream, child] = await stormPids(pidFile);
    leaders.push(upstream!);
    expect(await alive(upstream!)).toBe(true);
    expect(await alive(child!)).toBe(true);
    const members = await groupMembersOf([upstream!]);

    const started = Date.now();
    const stopped = await served.stop(signal);
    const took = Date.now() - started;
    console.log(`[upstream stop] ${signal} with a storming upstream: exit ${stopped.code} in ${took} ms`);
    expect(stopped, served.stderr()).toEqual({ code: 0, signal: null, killed: false });
    expect(served.stderr()).not.toContain('stop did not finish');
    await until(
      async () => !(await alive(upstream!)) && !(await alive(child!)),
      5_000,
      'the upstream and its child to be gone',
    );
    // It led a process group of its own, its child in it: what the stop ended was the group.
    expect(members).toEqual(expect.arrayContaining([upstream, child]));
    expect(await groupMembersOf([upstream!])).toEqual([]);
    served = null;
  }, 120_000);
});

it('a service with seven ordinary upstreams stops on SIGTERM with exit 0, each of their groups ended', async () => {
  const dir = await mkdtemp(join(work, 'seven-'));
  const ids = ['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7'];
  for (const id of ids) {
    const r = await runCli([
      'upstreams',
      'add',
      id,
      '--stdio',
      '--unconfined',
      ...dirArgs(dir),
      '--json',
      '--',
      process.execPath,
      TEST_UPSTREAM,
    ]);
    expect(r.code, r.stderr).toBe(0);
  }
  const served = await startServe(dir);
  try {
    let pids: number[] = [];
    await until(
      async () => {
        const views = await cliJson<Array<{ id: string; health: { status: string } }>>(dir, ['upstreams', 'list']);
        if (!views.every((v) => v.health.status === 'connected')) return false;
        pids = (await groupsOfChildren(served.child.pid!)) ?? [];
        return pids.length === 7;
      },
      60_000,
      'the seven upstreams to connect',
    );
    expect(pids).toHaveLength(7);
    leaders.push(...pids);
    const started = Date.now();
    const stopped = await served.stop('SIGTERM');
    console.log(`[upstream stop] SIGTERM with 7 upstreams: exit ${stopped.code} in ${Date.now() - started} ms`);
    expect(stopped, served.stderr()).toEqual({ code: 0, signal: null, killed: false });
    await until(async () => (await groupMembersOf(pids)).length === 0, 5_000, 'their groups to be gone');
  } finally {
    await served.stop('SIGKILL');
  }
}, 180_000);

/** The pids of `parent`'s children that lead a process group of their own (its upstreams), from /proc. */
async function groupsOfChildren(parent: number): Promise<number[] | null> {
  const out: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const [, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(ppid) === parent && Number(pgrp) === Number(name)) out.push(Number(name));
  }
  return out.length === 7 ? out : null;
}

it('a process that dies of an uncaught error ends its upstreams process groups on the way out', async () => {
  const pidFile = join(work, 'pids-uncaught');
  const storm = `${pidFile}.storm`;
  await writeFile(storm, '');
  // The transport on its own, in a process that throws once its upstream storms.
  const script = `
    import { GroupStdioTransport } from ${JSON.stringify(join(REPO, 'main/plugins/upstream/stdio-transport.ts'))};
    import * as client from '@modelcontextprotocol/client';
    import * as stdio from '@modelcontextprotocol/client/stdio';
    import { existsSync, readFileSync } from 'node:fs';
    const t = new GroupStdioTransport(
      { command: process.execPath, args: [${JSON.stringify(STORM_UPSTREAM)}], env: { PIDS: ${JSON.stringify(pidFile)}, STORM: ${JSON.stringify(storm)} } },
      { client, stdio },
      () => {},
    );
    const c = new client.Client({ name: 'x', version: '1' });
    await c.connect(t);
    const wait = setInterval(() => {
      if (existsSync(${JSON.stringify(pidFile)}) && readFileSync(${JSON.stringify(pidFile)}, 'utf8').split('\\n').length > 2) {
        clearInterval(wait);
        throw new Error('an uncaught error');
      }
    }, 20);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, stdio: 'pipe' });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  expect(stderr).toContain('an uncaught error');
  expect(code).toBe(1);
  const [upstream, grandchild] = (await readFile(pidFile, 'utf8')).split('\n').filter(Boolean).map(Number);
  leaders.push(upstream!);
  await until(async () => (await groupMembersOf([upstream!])).length === 0, 5_000, 'the group to be gone');
  expect(await alive(upstream!)).toBe(false);
  expect(await alive(grandchild!)).toBe(false);
}, 60_000);
