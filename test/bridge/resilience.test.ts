import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type BridgedClient,
  bridgedClient,
  INITIALIZE,
  INITIALIZED,
  type RawBridge,
  rawBridge,
} from './helpers/bridge-client.ts';
import { ensureBundle } from './helpers/bundle.ts';
import { type Everything, everything, freePort } from './helpers/everything.ts';
import { bigText, sha256, type TinyServer, tinyServer } from './helpers/tiny-server.ts';

// What happens around the happy path: restarts, late starts, cancellation,
// large results, and the ways a bridge is told to stop.

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

beforeAll(ensureBundle);

async function withEverything(opts?: Parameters<typeof everything>[0]): Promise<Everything> {
  const s = await everything(opts);
  cleanups.push(() => s.stop());
  return s;
}
async function withTiny(opts?: Parameters<typeof tinyServer>[0]): Promise<TinyServer> {
  const s = await tinyServer(opts);
  cleanups.push(() => s.stop());
  return s;
}
async function withClient(...args: Parameters<typeof bridgedClient>): Promise<BridgedClient> {
  const c = await bridgedClient(...args);
  cleanups.push(() => c.close());
  return c;
}
function withRaw(...args: Parameters<typeof rawBridge>): RawBridge {
  const r = rawBridge(...args);
  cleanups.push(() => r.child.exitCode === null && r.child.kill('SIGKILL'));
  return r;
}

const text = (r: { content?: unknown }) => (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');

describe('target restarted mid-session', () => {
  it('starts a new session by replaying initialize and retries the call that hit the old one', async () => {
    const server = await withEverything();
    const { client, stderr } = await withClient(['--url', server.url]);
    expect(text(await client.callTool({ name: 'echo', arguments: { message: 'before' } }))).toBe('Echo: before');

    await server.restart(); // a new process: it knows no session
    expect(text(await client.callTool({ name: 'echo', arguments: { message: 'after' } }))).toBe('Echo: after');
    expect((await client.listTools()).tools.length).toBeGreaterThan(5);
    // The restarted server saw a fresh initialize, which the client never sent again itself.
    expect(server.log()).toMatch(/Session initialized with ID/);
    expect(stderr()).toContain('replaying the client');
  });
});

describe('endpoint coming up after the bridge', () => {
  it('waits for a late --url endpoint instead of failing the client', async () => {
    const port = await freePort();
    const late = await everything({ port, start: false });
    cleanups.push(() => late.stop());
    const { client, transport, stderr } = await withClient(['--url', late.url, '--connect-timeout', '30'], {
      connect: false,
    });
    let up = false;
    const connected = client.connect(transport).then(() => up);
    // Refused, and waiting rather than failing the client: only now does the endpoint come up.
    await vi.waitFor(() => expect(stderr()).toContain('waiting for the MCP endpoint to come up'), {
      timeout: 10_000,
      interval: 20,
    });
    expect(up).toBe(false);
    await late.start();
    up = true;
    expect(await connected).toBe(true);
    expect(text(await client.callTool({ name: 'echo', arguments: { message: 'late' } }))).toBe('Echo: late');
    // Its first connection is not a recovery.
    expect(stderr()).toContain('the MCP endpoint is up');
    expect(stderr()).not.toContain('reachable again');
  });

  it('finds the endpoint through runtime.json (no --url), written once the service is up', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-bridge-rt-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const server = await withTiny();
    const { client, transport, stderr } = await withClient([], {
      env: { GATEHOUSE_DATA_DIR: dataDir },
      connect: false,
    });
    const connected = client.connect(transport);
    // No runtime.json yet: the bridge waits for one rather than failing the client.
    await vi.waitFor(() => expect(stderr()).toContain('waiting for the MCP endpoint to come up'), {
      timeout: 10_000,
      interval: 20,
    });
    const info = {
      pid: process.pid,
      base_url: server.url.replace('/mcp', ''),
      mcp_url: server.url,
      console_url: '',
      admin_url: '',
      version: '0',
      started: new Date().toISOString(),
    };
    writeFileSync(join(dataDir, 'runtime.json'), JSON.stringify(info));
    await connected;
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'found' } }))).toBe('found');
  });

  it('answers initialize with a clear error when runtime.json names a process that has exited', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-bridge-rt-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    writeFileSync(
      join(dataDir, 'runtime.json'),
      JSON.stringify({ pid: 2 ** 22 + 12345, mcp_url: 'http://127.0.0.1:9/mcp' }),
    );
    const raw = withRaw(['--data-dir', dataDir, '--connect-timeout', '0.5']);
    raw.send(INITIALIZE);
    const reply = await raw.reply(0);
    expect(reply.error).toMatchObject({ data: { code: 'service_unavailable' } });
    expect((reply.error as { message: string }).message).toMatch(/Gatehouse is not running .*has exited/);
  });
});

describe('cancellation', () => {
  it('a notifications/cancelled from the client aborts the matching HTTP request', async () => {
    const server = await withTiny();
    const { client } = await withClient(['--url', server.url]);
    const ctrl = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: { ms: 20_000 } }, { signal: ctrl.signal });
    await expect.poll(() => server.seen.some((s) => s.rpcMethod === 'tools/call')).toBe(true);
    ctrl.abort('changed my mind');
    await expect(call).rejects.toThrow();
    // The POST carrying the call was cut off, and the cancellation itself was forwarded.
    await expect.poll(() => server.seen.find((s) => s.rpcMethod === 'tools/call')?.closedEarly).toBe(true);
    await expect.poll(() => server.seen.some((s) => s.rpcMethod === 'notifications/cancelled')).toBe(true);
    // The bridge carries on.
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
  });

  it('against a 2026-07-28 server: closing the request is the cancellation, with no notification the server would refuse', async () => {
    const server = await withTiny();
    const { client, stderr } = await withClient(['--url', server.url], {
      clientOptions: { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    });
    for (let i = 0; i < 3; i++) {
      const ctrl = new AbortController();
      const call = client.callTool({ name: 'slow', arguments: { ms: 20_000 } }, { signal: ctrl.signal });
      await expect.poll(() => server.seen.filter((s) => s.rpcMethod === 'tools/call').length).toBe(i + 1);
      ctrl.abort('changed my mind');
      await expect(call).rejects.toThrow();
      await expect.poll(() => server.seen.filter((s) => s.rpcMethod === 'tools/call')[i]?.closedEarly).toBe(true);
    }
    expect(text(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
    expect(server.seen.some((s) => s.rpcMethod === 'notifications/cancelled')).toBe(false);
    expect(stderr()).not.toMatch(/refused a client notification|Missing session/);
  });
});

describe('large results', () => {
  it('delivers an 8 MiB tool result intact', async () => {
    const server = await withTiny();
    const { client } = await withClient(['--url', server.url]);
    const bytes = 8 * 1024 * 1024;
    const result = await client.callTool({ name: 'big', arguments: { bytes } }, { timeout: 60_000 });
    const got = text(result);
    expect(got.length).toBe(bytes);
    expect(sha256(got)).toBe(sha256(bigText(bytes)));
  });
});

describe('a server whose answer never ends', () => {
  // Without a bound the bridge held every byte of such a message (it must have a whole message
  // before it writes it as one stdio line) until the OS killed it, taking the client's session along.
  for (const as of ['sse', 'json'] as const) {
    it(`(${as}) costs at most 64 MiB: the call fails with the reason and the next call works`, async () => {
      const server = await withTiny();
      const { client } = await withClient(['--url', server.url]);
      const flood = { kind: 'flood' as const, as, onlyFor: 'tools/call', times: 1, sent: 0 };
      server.trouble = flood;
      const failed = await client
        .callTool({ name: 'echo', arguments: { text: 'never answered' } }, { timeout: 60_000 })
        .then(
          () => null,
          (e: Error) => e,
        );
      expect(failed?.message).toMatch(
        /larger than 64 MiB; the bridge stopped reading it; the server's answer to this request was not delivered/,
      );
      // The bridge hung up soon after the bound: not much more than 64 MiB was sent before it did.
      expect(flood.sent).toBeGreaterThanOrEqual(64 * 1024 * 1024);
      expect(flood.sent).toBeLessThan(80 * 1024 * 1024);
      expect(text(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
    });
  }
});

describe('stopping', () => {
  it('on stdin EOF: aborts what is in flight, DELETEs the session and exits 0', async () => {
    const server = await withEverything();
    const raw = withRaw(['--url', server.url]);
    raw.send(INITIALIZE);
    await raw.reply(0);
    raw.send(INITIALIZED);
    raw.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 3 } },
    });
    // in flight once the server has the third POST (initialize, initialized, then the call)
    await expect.poll(() => server.log().split('Received MCP POST request').length - 1).toBeGreaterThanOrEqual(3);
    raw.child.stdin!.end();
    const exit = await raw.exit();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(server.log()).toContain('Received session termination request');
    // Nothing but protocol on stdout: every line is a JSON-RPC message.
    for (const line of raw.stdout().split('\n').filter(Boolean))
      expect(JSON.parse(line)).toHaveProperty('jsonrpc', '2.0');
  });

  it('on SIGTERM: exits 0 with the request aborted at the server', async () => {
    const server = await withTiny();
    const raw = withRaw(['--url', server.url]);
    raw.send(INITIALIZE);
    await raw.reply(0);
    raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 20_000 } } });
    await expect.poll(() => server.seen.some((s) => s.rpcMethod === 'tools/call')).toBe(true);
    raw.child.kill('SIGTERM');
    expect(await raw.exit()).toEqual({ code: 0, signal: null });
    await expect.poll(() => server.seen.find((s) => s.rpcMethod === 'tools/call')?.closedEarly).toBe(true);
  });
});
