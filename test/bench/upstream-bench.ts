/**
 * Upstream MCP servers through Gatehouse, side by side in one run, call by
 * call interleaved, with the same SDK client:
 *
 *   direct        the SDK client over stdio to server-everything
 *   gatehouse     the SDK client over Streamable HTTP to Gatehouse (licensed by the
 *                 real reference gateway, in this process), server-everything behind it over stdio
 *   supergateway  the SDK client over Streamable HTTP to supergateway (stateful),
 *                 server-everything behind it over stdio
 *
 * Figures: tools/call of `echo`, p50/p99 and the added latency over direct
 * (target: Gatehouse adds no more than supergateway); the same three paths to
 * test-upstream.mjs for a call answered with 1 MiB of text; the bytes of the
 * same tools/list through each; then tools/list of 500 tools from 5 upstreams
 * through Gatehouse (target: p50 under 20 ms).
 *
 * Run: npx tsx test/bench/upstream-bench.ts   (BENCH_CALLS to scale)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { freePort } from '../bridge/helpers/everything.ts';
import { rawPost } from '../helpers/service.ts';
import { startUpstreamWorld, EVERYTHING, REPO, TEST_UPSTREAM } from '../plugins/upstream/upstream-world.ts';
import { printTable, summarize } from './stats.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const LISTS = Number(process.env.BENCH_LISTS ?? 200);
const newClient = () => new Client({ name: 'bench', version: '1' });

async function startSupergateway(
  port: number,
  command = `${process.execPath} ${EVERYTHING} stdio`,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; client: Client }> {
  const child = spawn(
    join(REPO, 'node_modules/.bin/supergateway'),
    [
      '--stdio',
      command,
      '--outputTransport',
      'streamableHttp',
      '--stateful',
      '--port',
      String(port),
      '--logLevel',
      'none',
    ],
    { stdio: 'ignore', env },
  );
  for (let i = 0; ; i++) {
    const client = newClient();
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      return { child, client };
    } catch (e) {
      if (i > 100) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const u = await startUpstreamWorld();
// The per-token rate limit (120/min by default) would measure itself, not the path.
await u.ok('PATCH', 'settings', { rate_limit: 0 });
await u.ok('POST', 'upstreams', {
  id: 'ev',
  transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
});
const direct = newClient();
await direct.connect(
  new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }),
);
const gatehouse = await u.mcp();
const sgPort = await freePort();
const sg = await startSupergateway(sgPort);
const sgUrl = `http://127.0.0.1:${sgPort}/mcp`;

type Path = { c: Client; tool: string };
type Paths = { direct: Path; gatehouse: Path; supergateway: Path };

/**
 * `calls` calls of each path's tool, interleaved call by call (the first `warmup` rounds not kept), each answer checked
 * by `check`; printed as p50/p99 and what each path adds over direct. Returns the added p50s of Gatehouse and
 * supergateway.
 */
async function compare(
  title: string,
  paths: Paths,
  calls: number,
  warmup: number,
  args: (i: number) => Record<string, unknown>,
  check: (r: Awaited<ReturnType<Client['callTool']>>) => boolean,
): Promise<{ gh: number; sg: number }> {
  const names = Object.keys(paths) as Array<keyof Paths>;
  const samples: Record<keyof Paths, number[]> = { direct: [], gatehouse: [], supergateway: [] };
  for (let i = 0; i < calls + warmup; i++) {
    for (const name of names) {
      const t = performance.now();
      const r = await paths[name].c.callTool({ name: paths[name].tool, arguments: args(i) });
      const ms = performance.now() - t;
      if (r.isError || !check(r)) throw new Error(`${name}: ${JSON.stringify(r).slice(0, 300)}`);
      if (i >= warmup) samples[name].push(ms);
    }
  }
  const base = summarize(samples.direct);
  printTable(
    `${title}, ${calls} calls each, interleaved (ms)`,
    ['path', 'p50', 'p99', 'added p50', 'p50 ratio'],
    names.map((k) => {
      const s = summarize(samples[k]);
      return [k, s.p50, s.p99, s.p50 - base.p50, s.p50 / base.p50];
    }),
  );
  return { gh: summarize(samples.gatehouse).p50 - base.p50, sg: summarize(samples.supergateway).p50 - base.p50 };
}

const added = await compare(
  'tools/call echo',
  {
    direct: { c: direct, tool: 'echo' },
    gatehouse: { c: gatehouse, tool: 'ev__echo' },
    supergateway: { c: sg.client, tool: 'echo' },
  },
  CALLS,
  50,
  (i) => ({ message: `m${i}` }),
  () => true,
);
console.log(
  `Gatehouse adds ${added.gh.toFixed(3)} ms p50, supergateway ${added.sg.toFixed(3)} ms: ratio ${(added.gh / added.sg).toFixed(2)} (target <= 1)`,
);

// A 1 MiB answer to a small call, through each path to the same fixture server (test-upstream.mjs, BIG_TOOL):
// what each costs per byte it carries back. supergateway's body parser refuses a request that large, so the
// megabyte travels in the answer only.
const BIG_CALLS = Number(process.env.BENCH_BIG_CALLS ?? 60);
const BIG_BYTES = 1024 * 1024;
const bigEnv = { ...process.env, BIG_TOOL: '1' };
await u.ok('POST', 'upstreams', {
  id: 'tu',
  transport: {
    kind: 'stdio',
    command: process.execPath,
    args: [TEST_UPSTREAM],
    env: [{ name: 'BIG_TOOL', value: '1' }],
  },
});
const bigDirect = newClient();
await bigDirect.connect(
  new StdioClientTransport({ command: process.execPath, args: [TEST_UPSTREAM], env: bigEnv, stderr: 'ignore' }),
);
const bigGatehouse = await u.mcp();
const bigSg = await startSupergateway(await freePort(), `${process.execPath} ${TEST_UPSTREAM}`, bigEnv);
const bigAdded = await compare(
  'tools/call answered with 1 MiB of text',
  {
    direct: { c: bigDirect, tool: 'big' },
    gatehouse: { c: bigGatehouse, tool: 'tu__big' },
    supergateway: { c: bigSg.client, tool: 'big' },
  },
  BIG_CALLS,
  5,
  () => ({ bytes: BIG_BYTES }),
  (r) => ((r.content as Array<{ text?: string }>)[0]?.text ?? '').length === BIG_BYTES,
);
console.log(
  `With a 1 MiB answer, Gatehouse adds ${bigAdded.gh.toFixed(2)} ms p50, supergateway ${bigAdded.sg.toFixed(2)} ms: ratio ${(bigAdded.gh / bigAdded.sg).toFixed(2)} (the issue measured 0.61)`,
);
await Promise.all([bigDirect.close(), bigGatehouse.close(), bigSg.client.close()]);
bigSg.child.kill('SIGKILL');

/** A tools/list answer's tools as sent: one JSON-RPC result, read from a JSON body or an SSE one. */
async function rawTools(url: string, headers: Record<string, string>): Promise<Array<Record<string, unknown>>> {
  const res = await rawPost(
    url,
    { jsonrpc: '2.0', id: 'bytes', method: 'tools/list', params: {} },
    { 'MCP-Protocol-Version': '2025-11-25', ...headers },
  );
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .find((data) => data.includes('"result"'))!
    : text;
  return (JSON.parse(json) as { result: { tools: Array<Record<string, unknown>> } }).result.tools;
}
// The same upstream's tools as each sends them to a client (the gateway's own tools left out): what a client pays to read.
const sgSession = (sg.client.transport as StreamableHTTPClientTransport).sessionId;
const viaSg = await rawTools(sgUrl, sgSession ? { 'Mcp-Session-Id': sgSession } : {});
const viaGh = (await rawTools(u.w.svc.mcpUrl, { Authorization: `Bearer ${u.token}` })).filter((t) =>
  String(t.name).startsWith('ev__'),
);
const bytesOf = (tools: unknown[]) => Buffer.byteLength(JSON.stringify(tools));
// server-everything lists some tools only to clients that declare a capability: the same tools on both sides, or no figure.
const names = (tools: Array<Record<string, unknown>>, prefix = '') =>
  tools
    .map((t) => String(t.name).slice(prefix.length))
    .sort()
    .join(' ');
if (names(viaGh, 'ev__') !== names(viaSg))
  throw new Error(`the two lists differ: ${names(viaGh, 'ev__')} against ${names(viaSg)}`);
printTable(
  `tools/list of server-everything's ${viaSg.length} tools as a 2025-11-25 client receives them (JSON bytes of those tools; Gatehouse's own left out)`,
  ['path', 'bytes', 'per tool', 'ratio'],
  [
    ['supergateway', bytesOf(viaSg), bytesOf(viaSg) / viaSg.length, 1],
    ['gatehouse', bytesOf(viaGh), bytesOf(viaGh) / viaGh.length, bytesOf(viaGh) / bytesOf(viaSg)],
  ],
);

for (let i = 0; i < 5; i++) {
  await u.ok('POST', 'upstreams', {
    id: `many${i}`,
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [join(REPO, 'test/fixtures/upstream/many-tools.mjs')],
      env: [{ name: 'TOOL_COUNT', value: '100' }],
    },
  });
}
const lister = await u.mcp();
const lists: number[] = [];
let count = 0;
for (let i = 0; i < LISTS + 20; i++) {
  const t = performance.now();
  const r = await lister.listTools(undefined, { cacheMode: 'bypass' });
  const ms = performance.now() - t;
  count = r.tools.length;
  if (i >= 20) lists.push(ms);
}
// The same list as raw bytes (fetch, no SDK parsing of 500 tool schemas on the client's side): the gateway's own share.
const raw: number[] = [];
for (let i = 0; i < LISTS + 20; i++) {
  const t = performance.now();
  const res = await fetch(u.w.svc.mcpUrl, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${u.token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list', params: {} }),
  });
  const body = await res.text();
  const ms = performance.now() - t;
  if (!body.includes('many4__tool_99')) throw new Error(`raw tools/list: ${res.status} ${body.slice(0, 300)}`);
  if (i >= 20) raw.push(ms);
}
const l = summarize(lists);
const r = summarize(raw);
printTable(
  `tools/list through Gatehouse, ${count} tools (500 from 5 upstreams, the other two upstreams' and the built-ins), ${LISTS} lists (ms)`,
  ['client', 'p50', 'p99', 'target p50'],
  [
    ['SDK client (parses and validates)', l.p50, l.p99, 20],
    ['raw HTTP (bytes only)', r.p50, r.p99, 20],
  ],
);

await Promise.all([direct.close(), gatehouse.close(), sg.client.close(), lister.close()]);
sg.child.kill('SIGKILL');
await u.stop();
process.exit(0);
