/**
 * Did a commit make a signed entitlements/check slower? Starts the gateway of
 * each worktree given (e.g. `git worktree add /tmp/base <commit>` with
 * node_modules linked) in its own process, and a bare node:http echo in
 * another, then sends checks to each gateway and an echo after every check,
 * interleaved (the order of gateways alternates each round), so load from
 * other processes on a shared machine hits all sides alike. Prints p25/p50/
 * p75/p99, the p50 of each block of 100 rounds (the spread) and the p50 ratio
 * to the echo. Not run by `npm run bench` (it needs worktrees):
 *   npx tsx test/bench/cloud-check-compare.ts /tmp/base .            (PGlite)
 *   DB=pg npx tsx test/bench/cloud-check-compare.ts /tmp/base .      (durable PostgreSQL, one database each)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { signHeaders, type SiteCredentials } from '../cloud/helpers/sign.ts';
import { startDurablePostgres } from './durable-postgres.ts';
import { percentile } from './stats.ts';

interface Side {
  gateway: string;
  creds: SiteCredentials;
  proc: ChildProcess;
}

const roots = process.argv.slice(2).map((r) => resolve(r));
if (roots.length === 0) throw new Error('usage: cloud-check-compare.ts <worktree> [<worktree> ...]');
const N = Number(process.env.N ?? 600);
const here = fileURLToPath(new URL('.', import.meta.url));
const agents = new Map<string, Agent>();

function post(url: string, headers: Record<string, string>, body: string): Promise<void> {
  const { host } = new URL(url);
  let agent = agents.get(host);
  if (!agent) agents.set(host, (agent = new Agent({ keepAlive: true, maxSockets: 1 })));
  return new Promise((done, fail) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        res.resume().on('end', () => (res.statusCode === 200 ? done() : fail(new Error(`${url}: ${res.statusCode}`))));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

function child(args: string[]): Promise<Side> {
  const proc = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((done, fail) => {
    proc.once('exit', (code) => fail(new Error(`${args[0]} exited (${code}) before it was ready`)));
    createInterface({ input: proc.stdout! }).once('line', (l) =>
      done({ ...(JSON.parse(l) as Omit<Side, 'proc'>), proc }),
    );
  });
}

const cluster = process.env.DB === 'pg' ? await startDurablePostgres() : null;
if (process.env.DB === 'pg' && !cluster) throw new Error('DB=pg needs the server binaries under /usr/lib/postgresql');
const urls = await Promise.all(
  roots.map(async (_, i) => {
    if (!cluster) return '';
    const c = new pg.Client({ connectionString: cluster.url });
    await c.connect();
    await c.query(`CREATE DATABASE bench_${i}`);
    await c.end();
    const u = new URL(cluster.url);
    u.pathname = `/bench_${i}`;
    return u.toString();
  }),
);
const gateways: Side[] = [];
for (const [i, root] of roots.entries()) gateways.push(await child([`${here}cloud-check-server.ts`, root, urls[i]!]));
const echo = await child([`${here}cloud-check-echo.ts`]);

const body = JSON.stringify({ feature: 'mcp.core' });
async function timed(f: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}
const check = (g: Side) =>
  timed(() =>
    post(
      `${g.gateway}/entitlements/check`,
      signHeaders(g.creds, { method: 'POST', url: `${g.gateway}/entitlements/check`, body }),
      body,
    ),
  );
const echoOnce = () => timed(() => post(echo.gateway, {}, body));

for (let i = 0; i < 80; i++) {
  for (const g of gateways) {
    await check(g);
    await echoOnce();
  }
}
const samples = gateways.map((): number[] => []);
const echoes: number[] = [];
for (let i = 0; i < N; i++) {
  const order = gateways.map((_, j) => j);
  if (i % 2) order.reverse();
  for (const j of order) {
    samples[j]!.push(await check(gateways[j]!));
    echoes.push(await echoOnce());
  }
}
const pct = (a: number[], p: number) =>
  percentile(
    [...a].sort((x, y) => x - y),
    p,
  );
const blocks = (a: number[], k: number) =>
  Array.from({ length: Math.floor(a.length / k) }, (_, b) => pct(a.slice(b * k, (b + 1) * k), 50).toFixed(2)).join(' ');
const e50 = pct(echoes, 50);
console.log(`${cluster ? 'PostgreSQL (durable)' : 'PGlite (in memory)'}, ${N} rounds`);
console.log(
  `echo: p50 ${e50.toFixed(3)} ms, p99 ${pct(echoes, 99).toFixed(3)}; block p50s ${blocks(echoes, 100 * gateways.length)}`,
);
for (const [j, s] of samples.entries()) {
  const q = [25, 50, 75, 99].map((p) => pct(s, p).toFixed(3)).join(' / ');
  console.log(
    `${roots[j]}: check p25/p50/p75/p99 ${q} ms, p50 ${(pct(s, 50) / e50).toFixed(2)}x the echo; block p50s ${blocks(s, 100)}`,
  );
}
for (const side of [...gateways, echo]) side.proc.kill('SIGTERM');
for (const a of agents.values()) a.destroy();
await new Promise((r) => setTimeout(r, 1500));
cluster?.stop();
