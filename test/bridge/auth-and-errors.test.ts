import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BridgedClient, bridgedClient, INITIALIZE, rawBridge } from './helpers/bridge-client.ts';
import { ensureBundle } from './helpers/bundle.ts';
import { type TinyServer, tinyServer } from './helpers/tiny-server.ts';

// Credentials in, secrets never out; refusals become JSON-RPC errors that say
// what to do; what is safe to retry is retried, what is not is not.

const TOKEN = `gth_${'A'.repeat(20)}${'b9_-'.repeat(5)}xyz`;
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
beforeAll(ensureBundle);

async function setup(
  serverOpts: Parameters<typeof tinyServer>[0],
  args: string[],
  env: Record<string, string> = {},
): Promise<{ server: TinyServer; bridged: BridgedClient }> {
  const server = await tinyServer(serverOpts);
  cleanups.push(() => server.stop());
  const bridged = await bridgedClient(['--url', server.url, ...args], { env });
  cleanups.push(() => bridged.close());
  return { server, bridged };
}

const calls = (server: TinyServer, rpc: string) => server.seen.filter((s) => s.rpcMethod === rpc).length;

describe('credentials', () => {
  it('--token-env sends the bearer token and keeps it out of every log line', async () => {
    const { server, bridged } = await setup(
      { token: TOKEN },
      ['--token-env', 'GH_TEST_TOKEN', '--log-level', 'debug'],
      { GH_TEST_TOKEN: TOKEN },
    );
    await bridged.client.callTool({ name: 'echo', arguments: { text: TOKEN } });
    expect(server.seen.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(bridged.stderr()).toContain('bridge started');
    expect(bridged.stderr()).not.toContain(TOKEN);
  });

  it('masks the token even when a server echoes it back in an error', async () => {
    const { server, bridged } = await setup({ token: TOKEN }, ['--token-env', 'GH_TEST_TOKEN'], {
      GH_TEST_TOKEN: TOKEN,
    });
    server.trouble = { kind: 'status', status: 403, message: `token ${TOKEN} may not do that`, onlyFor: 'tools/list' };
    const err = await bridged.client.listTools().catch((e: Error) => e);
    expect(String(err)).toContain('token [redacted] may not do that');
    expect(String(err)).not.toContain(TOKEN);
    expect(bridged.stderr()).toContain('[redacted]');
    expect(bridged.stderr()).not.toContain(TOKEN);
  });

  it('--header expands ${VAR} from the environment', async () => {
    const { server, bridged } = await setup(
      {},
      ['--header', 'X-Api-Key: key-${GH_TEST_KEY}', '--header', 'X-Client: tests'],
      { GH_TEST_KEY: 'k3y-from-env' },
    );
    await bridged.client.listTools();
    expect(server.seen.at(-1)?.headers['x-api-key']).toBe('key-k3y-from-env');
    expect(server.seen.at(-1)?.headers['x-client']).toBe('tests');
  });

  it('exits 3 with a clear line when the token variable is unset', async () => {
    const raw = rawBridge(['--url', 'http://127.0.0.1:9/mcp', '--token-env', 'GH_TEST_UNSET_VAR'], {
      GH_TEST_UNSET_VAR: undefined,
    });
    cleanups.push(() => raw.child.kill('SIGKILL'));
    expect((await raw.exit()).code).toBe(3);
    expect(raw.stderr()).toContain('--token-env GH_TEST_UNSET_VAR: the variable is not set or empty');
    expect(raw.stdout()).toBe('');
  });
});

describe('refusals become errors that say what to do', () => {
  it('401 (token revoked): "token unknown or revoked", one stderr line, no secret', async () => {
    const { server, bridged } = await setup({ token: TOKEN }, ['--token-env', 'GH_TEST_TOKEN'], {
      GH_TEST_TOKEN: TOKEN,
    });
    await bridged.client.listTools();
    server.token = 'gth_someOtherTokenAltogether_00000000000000000';
    const first = bridged.client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await expect(first).rejects.toThrow(/token unknown or revoked: create one with `gatehouse tokens create/);
    await expect(bridged.client.listTools()).rejects.toMatchObject({ code: -32001 });
    const lines = bridged
      .stderr()
      .split('\n')
      .filter((l) => l.includes('token unknown or revoked'));
    expect(lines).toHaveLength(1);
    expect(bridged.stderr()).not.toContain(TOKEN);
  });

  it('401 with no token configured says how to configure one', async () => {
    const { bridged } = await setup({}, []).then(async (s) => {
      s.server.token = TOKEN;
      return s;
    });
    await expect(bridged.client.listTools()).rejects.toThrow(
      /none is configured: create one with `gatehouse tokens create --keychain ACCOUNT`/,
    );
  });

  it('503 gateway_disabled: "the gateway is switched off in Gatehouse settings"', async () => {
    const { server, bridged } = await setup({}, []);
    server.trouble = { kind: 'status', status: 503, dataCode: 'gateway_disabled' };
    await expect(bridged.client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(
      /the gateway is switched off in Gatehouse settings/,
    );
    await expect(bridged.client.listTools()).rejects.toMatchObject({
      code: -32010,
      data: { code: 'gateway_disabled', http_status: 503 },
    });
    // Not retried: switching it on is for a person to do.
    expect(calls(server, 'tools/call')).toBe(1);
  });

  it("403 passes the server's reason on", async () => {
    const { server, bridged } = await setup({}, []);
    server.trouble = { kind: 'status', status: 403, times: 1, onlyFor: 'tools/list' };
    await expect(bridged.client.listTools()).rejects.toThrow(/refused this request \(HTTP 403\): refused: forbidden/);
  });
});

describe('retries', () => {
  it('429 waits for Retry-After, then the call goes through (once)', async () => {
    const { server, bridged } = await setup({}, []);
    server.trouble = { kind: 'status', status: 429, retryAfter: '1', times: 1, onlyFor: 'tools/call' };
    const started = Date.now();
    const result = await bridged.client.callTool({ name: 'echo', arguments: { text: 'patient' } });
    expect((result.content as Array<{ text: string }>)[0]!.text).toBe('patient');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(calls(server, 'tools/call')).toBe(2);
    expect(server.seen.filter((s) => s.rpcMethod === 'tools/call' && !s.closedEarly)).toHaveLength(2);
  });

  it('429 asking for longer than the bound fails at once with when to try again', async () => {
    const { server, bridged } = await setup({}, []);
    server.trouble = { kind: 'status', status: 429, retryAfter: '120', times: 1, onlyFor: 'tools/list' };
    await expect(bridged.client.listTools()).rejects.toThrow(
      /rate limited by the server \(HTTP 429\): try again in 120 s/,
    );
  });

  it('a dropped connection: a tools/call is never sent twice, a list is retried', async () => {
    const { server, bridged } = await setup({}, []);
    server.trouble = { kind: 'drop', onlyFor: 'tools/call', times: 1 };
    await expect(bridged.client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(
      /may have run, so the bridge did not send it again/,
    );
    expect(calls(server, 'tools/call')).toBe(1);

    server.trouble = { kind: 'drop', onlyFor: 'tools/list', times: 1 };
    const { tools } = await bridged.client.listTools();
    expect(tools.map((t) => t.name)).toContain('echo');
    expect(calls(server, 'tools/list')).toBe(2);
  });

  it('502 on a tools/call is reported, on a resources/read retried', async () => {
    const { server, bridged } = await setup({}, []);
    server.trouble = { kind: 'status', status: 502, onlyFor: 'tools/call', times: 1 };
    await expect(bridged.client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(/HTTP 502/);
    expect(calls(server, 'tools/call')).toBe(1);
    server.trouble = { kind: 'status', status: 502, onlyFor: 'resources/read', times: 1 };
    const read = await bridged.client.readResource({ uri: 'tiny://note' });
    expect(read.contents[0]).toMatchObject({ text: 'a note' });
    expect(calls(server, 'resources/read')).toBe(2);
  });
});

describe('unreachable endpoint', () => {
  it('after --connect-timeout, initialize gets an error naming the endpoint', async () => {
    const raw = rawBridge(['--url', 'http://127.0.0.1:9/mcp', '--connect-timeout', '0.3']);
    cleanups.push(() => raw.child.kill('SIGKILL'));
    raw.send(INITIALIZE);
    const reply = await raw.reply(0);
    expect((reply.error as { message: string }).message).toMatch(
      /cannot reach the MCP endpoint.*127\.0\.0\.1:9.*connection refused/,
    );
  });
});
