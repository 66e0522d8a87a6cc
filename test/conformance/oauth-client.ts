import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/**
 * Gatehouse's OAuth client as the client under test of the official conformance suite's client
 * auth scenarios (scripts/conformance-oauth-client.sh; docs/conformance.md). The suite starts
 * its test servers and runs this with the MCP server's URL; this does what a person does, with
 * the real CLI against a running service: `upstreams add ID --url URL --oauth` (with
 * `--client-id` and `--client-secret -` on stdin when the scenario hands over a pre-registered
 * client), `upstreams login ID --no-browser`, whose printed authorization URL it fetches in place
 * of the browser (the suite's authorization servers approve at once and redirect to Gatehouse's
 * callback), then one call of the upstream's first tool through Gatehouse's MCP endpoint. A call
 * refused for more scope (a step-up) signs in once more and calls again. The upstream is removed
 * at the end. Its exit code is the flow's: the suite judges what its servers saw.
 *
 * Environment: GATEHOUSE_CONFORMANCE_DATA (the service's data dir), GATEHOUSE_CONFORMANCE_MCP
 * (its MCP URL), GATEHOUSE_TOKEN (a client token), and the suite's MCP_CONFORMANCE_SCENARIO and
 * MCP_CONFORMANCE_CONTEXT.
 */

const REPO = join(import.meta.dirname, '..', '..');
const url = process.argv[2];
const data = process.env.GATEHOUSE_CONFORMANCE_DATA;
const mcpUrl = process.env.GATEHOUSE_CONFORMANCE_MCP;
const token = process.env.GATEHOUSE_TOKEN;
if (!url || !data || !mcpUrl || !token) {
  process.stderr.write(
    'usage: GATEHOUSE_CONFORMANCE_DATA=DIR GATEHOUSE_CONFORMANCE_MCP=URL GATEHOUSE_TOKEN=T oauth-client.ts SERVER_URL\n',
  );
  process.exit(2);
}
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'scenario';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
  client_id?: string;
  client_secret?: string;
};
// An upstream id is at most 32 characters: the scenario's name, shortened, and a suffix of its own.
const short = scenario
  .replace(/^auth\//, '')
  .replace(/[^a-z0-9]+/gi, '-')
  .toLowerCase()
  .slice(0, 22)
  .replace(/-+$/, '');
const id = `cf-${short}-${randomBytes(2).toString('hex')}`;
/** The Client ID Metadata Document URL the suite's auth/basic-cimd expects a client to be configured with. */
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';

const log = (line: string) => process.stderr.write(`[gatehouse ${id}] ${line}\n`);

// The suite gives a client 30 s: one that waits longer (a sign-in that never comes back) ends itself first, and the
// commands it started with it, so nothing outlives the scenario.
const running = new Set<ReturnType<typeof spawn>>();
setTimeout(() => {
  log('gave up after 25 s');
  for (const child of running) child.kill();
  process.exit(1);
}, 25_000).unref();

/** One `gatehouse` command on the service's data dir; `onLine` sees each line of its stdout as it comes. */
function gatehouse(
  args: string[],
  o: { stdin?: string; onLine?: (line: string) => void } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [join(REPO, 'bin/gatehouse.cjs'), ...args, '--data-dir', data!, '--vault', 'file'],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  running.add(child);
  child.once('close', () => running.delete(child));
  child.stdin.end(o.stdin ?? '');
  let stdout = '';
  let stderr = '';
  let pending = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
    pending += c.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const l of lines) o.onLine?.(l);
  });
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `upstreams login`, with the browser step done by fetching the URL it prints. */
async function signIn(): Promise<'ok' | 'again' | 'failed'> {
  const browsed: Array<Promise<unknown>> = [];
  const r = await gatehouse(['upstreams', 'login', id, '--no-browser'], {
    onLine: (line) => {
      if (!/^https?:\/\//.test(line.trim())) return;
      log(`browser step: ${line.trim().slice(0, 200)}`);
      browsed.push(
        fetch(line.trim())
          .then(async (res) => log(`callback answered ${res.status}: ${(await res.text()).slice(0, 200)}`))
          .catch((e: unknown) => log(`the browser step failed: ${String(e)}`)),
      );
    },
  });
  await Promise.all(browsed);
  log(`login exited ${r.code}${r.code ? `: ${r.stderr.trim().slice(0, 500)}` : ''}`);
  // Signed in, then refused at once (its authorization server changed meanwhile): a person runs login again.
  return r.code === 0 ? 'ok' : browsed.length && /sign_in_required/.test(r.stderr) ? 'again' : 'failed';
}

/** The upstream's first tool, called as an MCP client of Gatehouse; answers whether it needs a sign-in again. */
async function callFirstTool(): Promise<'ok' | 'sign_in' | 'no_tools' | 'failed'> {
  const client = new Client({ name: 'conformance-oauth-client', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl!), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  try {
    const tool = (await client.listTools()).tools.find((t) => t.name.startsWith(`${id}__`));
    // Signed in, then refused at its first listing (its authorization server changed after the sign-in answered): a
    // person who sees no tools runs login again, which signs in anew if that is what the upstream needs.
    if (!tool) return (log('no tool of the upstream is offered'), 'no_tools');
    // Its tool declares no readOnlyHint: a person marks it a read, else the call would wait staged for approval, unsent.
    const marked = await gatehouse(['upstreams', 'review', id, '--read', tool.name.slice(id.length + 2)]);
    if (marked.code !== 0) return (log(`review --read exited ${marked.code}: ${marked.stderr.trim()}`), 'failed');
    const answer = await client.callTool({ name: tool.name, arguments: {} }).catch((e: Error) => ({
      isError: true,
      content: [{ type: 'text', text: e.message }],
    }));
    const text = JSON.stringify(answer.content).slice(0, 300);
    log(`${tool.name}: ${answer.isError ? 'error' : 'ok'} ${text}`);
    if (!answer.isError) return 'ok';
    return /sign-in|sign in/i.test(text) ? 'sign_in' : 'failed';
  } finally {
    await client.close();
  }
}

let ok = false;
try {
  const secret = context.client_secret;
  const added = await gatehouse(
    [
      'upstreams',
      'add',
      id,
      '--url',
      url,
      '--oauth',
      ...(context.client_id ? ['--client-id', context.client_id] : []),
      ...(secret ? ['--client-secret', '-'] : []),
      ...(scenario === 'auth/basic-cimd' ? ['--client-metadata-url', CIMD_URL] : []),
    ],
    secret ? { stdin: secret } : {},
  );
  if (added.code !== 0) throw new Error(`upstreams add exited ${added.code}: ${added.stderr.trim().slice(0, 500)}`);
  let signedIn = await signIn();
  if (signedIn === 'again') signedIn = await signIn();
  if (signedIn === 'ok') {
    let called = await callFirstTool();
    // One sign-in more for each, as a person would: the suite counts the authorization requests (auth/scope-retry-limit).
    if (called === 'no_tools' && (await signIn()) === 'ok') called = await callFirstTool();
    if (called === 'sign_in' && (await signIn()) === 'ok') called = await callFirstTool();
    ok = called === 'ok';
  }
} catch (e) {
  log(String(e));
} finally {
  await gatehouse(['upstreams', 'remove', id]).catch(() => undefined);
}
process.exit(ok ? 0 : 1);
