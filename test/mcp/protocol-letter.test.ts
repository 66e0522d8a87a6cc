import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, rawPost, startTestService, type Era } from '../helpers/service.ts';
import { SERVED_PROTOCOL_VERSIONS } from '../../main/mcp/protocol-versions.ts';

/** The MCP texts (2025-11-25, 2026-07-28) to the letter, through raw HTTP and the real SDK client, in both eras. */
let svc: Awaited<ReturnType<typeof startTestService>>;
let token: string;

beforeAll(async () => {
  svc = await startTestService();
  token = (await svc.createToken({ label: 'letter', user: 'admin' })).token;
});
afterAll(async () => svc?.cleanup());

const bearer = () => ({ Authorization: `Bearer ${token}` });
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
/** One request of either era, as raw HTTP: the 2025 era without the envelope, 2026-07-28 with it and its headers. */
function request(era: Era, method: string, params: Record<string, unknown> = {}, id: string | number = 1) {
  if (era === 'legacy') return rawPost(svc.mcpUrl, { jsonrpc: '2.0', id, method, params }, bearer());
  const name: Record<string, string> = typeof params.uri === 'string' ? { 'Mcp-Name': params.uri } : {};
  return rawPost(
    svc.mcpUrl,
    { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } },
    { ...bearer(), 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...name },
  );
}
type RpcAnswer = {
  id: unknown;
  error?: { code: number; message: string; data: Record<string, unknown> };
  result?: Record<string, unknown>;
};

for (const era of ['legacy', 'modern'] as const) {
  describe(`${era === 'legacy' ? '2025-11-25' : '2026-07-28'}`, () => {
    it('a tool error result carries no structuredContent that breaks the outputSchema; the code is in _meta', async () => {
      const client = await connectClient(svc.mcpUrl, token, era);
      try {
        const tool = (await client.listTools()).tools.find((t) => t.name === 'pages_get')!;
        expect(tool.outputSchema).toBeDefined();
        // the SDK client checks structured content against the tool's outputSchema: this call must not throw
        const res = await client.callTool({ name: 'pages_get', arguments: { id: 9999 } });
        expect(res.isError).toBe(true);
        expect(res.structuredContent).toBeUndefined();
        expect(res._meta?.['gatehouse/error']).toMatchObject({ code: 'not_found' });
        expect(JSON.stringify(res.content)).toContain('no page with id 9999');
      } finally {
        await client.close();
      }
    });

    it('invalid params answer -32602 in words: a cursor of the wrong type, a cursor we never issued', async () => {
      for (const [cursor, words] of [
        [5, 'cursor must be a string'],
        ['garbage!!', 'unknown cursor'],
      ] as const) {
        for (const method of ['tools/list', 'resources/list']) {
          const res = await request(era, method, { cursor });
          const body = (await res.json()) as RpcAnswer;
          expect(body.error).toMatchObject({ code: -32602, data: { code: 'invalid_params' } });
          expect(body.error!.message).toContain(words);
          expect(body.error!.message).not.toContain('"expected"');
          expect(body.id).toBe(1);
        }
      }
    });

    it('a resources/read of an unknown URI: -32002 in the 2025 era, -32602 in 2026-07-28 (SEP-2164)', async () => {
      const res = await request(era, 'resources/read', { uri: 'gatehouse://nope' });
      const body = (await res.json()) as RpcAnswer;
      expect(body.error).toMatchObject({
        code: era === 'legacy' ? -32002 : -32602,
        data: { code: 'not_found', uri: 'gatehouse://nope' },
      });
    });

    it("a string id longer than the bound is refused clearly, and the answer names the request's own id", async () => {
      const id = 'i'.repeat(300);
      const res = await request(era, 'tools/list', {}, id);
      expect(res.status).toBe(400);
      const body = (await res.json()) as RpcAnswer;
      expect(body.id).toBe(id);
      expect(body.error!.message).toContain('longer than 256');
    });

    it('a version we do not serve is -32022 naming every revision we do serve', async () => {
      const headers: Record<string, string> =
        era === 'legacy'
          ? { 'MCP-Protocol-Version': '1999-01-01' }
          : { 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/list' };
      const body =
        era === 'legacy'
          ? { jsonrpc: '2.0', id: 3, method: 'tools/list' }
          : {
              jsonrpc: '2.0',
              id: 3,
              method: 'tools/list',
              params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
            };
      const res = await rawPost(svc.mcpUrl, body, { ...bearer(), ...headers });
      expect(res.status).toBe(400);
      const answer = (await res.json()) as RpcAnswer;
      expect(answer.id).toBe(3);
      expect(answer.error).toMatchObject({
        code: -32022,
        data: { code: 'unsupported_protocol_version', supported: [...SERVED_PROTOCOL_VERSIONS] },
      });
    });
  });
}

describe('one list of versions, true everywhere', () => {
  it('names 2026-07-28 and 2025-11-25 alike in server/discover and in -32022', async () => {
    expect(SERVED_PROTOCOL_VERSIONS).toEqual(expect.arrayContaining(['2026-07-28', '2025-11-25']));
    const discover = (await (await request('modern', 'server/discover')).json()) as RpcAnswer;
    expect(discover.result!.supportedVersions).toEqual([...SERVED_PROTOCOL_VERSIONS]);
    const refused = (await (
      await rawPost(
        svc.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { ...bearer(), 'MCP-Protocol-Version': 'nonsense' },
      )
    ).json()) as RpcAnswer;
    expect(refused.error!.data.supported).toEqual(discover.result!.supportedVersions);
  });

  it('a JSON-RPC response posted with a 2026-07-28 header is taken (202), not refused with a 2025 list', async () => {
    const res = await rawPost(
      svc.mcpUrl,
      { jsonrpc: '2.0', id: 5, result: {} },
      { ...bearer(), 'MCP-Protocol-Version': '2026-07-28' },
    );
    expect(res.status).toBe(202);
  });

  it('initialize without params is -32602 in words, not -32603 with a schema dump', async () => {
    const res = await rawPost(svc.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'initialize' }, bearer());
    const body = (await res.json()) as RpcAnswer;
    expect(body.error).toMatchObject({ code: -32602, data: { code: 'invalid_params' } });
    expect(body.error!.message).toMatch(/params are required.*protocolVersion/);
    const noClient = (await (
      await rawPost(
        svc.mcpUrl,
        { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } },
        bearer(),
      )
    ).json()) as RpcAnswer;
    expect(noClient.error).toMatchObject({ code: -32602 });
    expect(noClient.error!.message).toContain('clientInfo');
  });
});

describe('2026-07-28: the order of the refusals, as the spec and its suite ask', () => {
  it('initialize sent as a 2026-07-28 request is a method that does not exist there: 404 -32601', async () => {
    const res = await request('modern', 'initialize', {
      protocolVersion: '2026-07-28',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as RpcAnswer;
    expect(body.id).toBe(1);
    expect(body.error).toMatchObject({ code: -32601, data: { code: 'method_not_found' } });
    expect(body.error!.message).toContain('no handshake');
    // without params, as the suite sends it: the same answer, not a -32602 about missing params
    const bare = await request('modern', 'initialize');
    expect(bare.status).toBe(404);
    expect(((await bare.json()) as RpcAnswer).error!.code).toBe(-32601);
  });

  it("a header and a _meta version that disagree are -32020 (400) first, even when the body's version is one we do not serve", async () => {
    for (const claimed of ['v999.0.0', '2025-11-25']) {
      const res = await rawPost(
        svc.mcpUrl,
        {
          jsonrpc: '2.0',
          id: 4,
          method: 'tools/list',
          params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': claimed } },
        },
        { ...bearer(), 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/list' },
      );
      expect(res.status, claimed).toBe(400);
      const body = (await res.json()) as RpcAnswer;
      expect(body.id).toBe(4);
      expect(body.error, claimed).toMatchObject({ code: -32020, data: { code: 'invalid_request' } });
      expect(body.error!.message).toContain(claimed);
    }
  });

  it('a version we do not serve in both the header and _meta is still -32022', async () => {
    const res = await rawPost(
      svc.mcpUrl,
      {
        jsonrpc: '2.0',
        id: 6,
        method: 'tools/list',
        params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } },
      },
      { ...bearer(), 'MCP-Protocol-Version': 'v999.0.0', 'Mcp-Method': 'tools/list' },
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as RpcAnswer).error!.code).toBe(-32022);
  });
});

describe('our codes in the implementation-defined range collide with none the MCP spec assigns', () => {
  it('401 is -32001, 403 -32003, the gateway switched off -32010: never -32002, -32020, -32021, -32022, -32042', async () => {
    const { JSONRPC_CODES } = await import('../../main/contract/errors.ts');
    const assigned = new Set([-32002, -32020, -32021, -32042]);
    for (const [code, n] of Object.entries(JSONRPC_CODES)) {
      if (n <= -32000 && n >= -32099) expect(assigned.has(n), code).toBe(false);
    }
    expect(JSONRPC_CODES.unsupported_protocol_version).toBe(-32022);
    const off = await startTestService({ enable: false });
    try {
      const t = (await off.createToken({ label: 'off' })).token;
      const res = await rawPost(
        off.mcpUrl,
        { jsonrpc: '2.0', id: 7, method: 'ping' },
        { Authorization: `Bearer ${t}` },
      );
      expect(res.status).toBe(503);
      expect(((await res.json()) as RpcAnswer).error).toMatchObject({
        code: -32010,
        data: { code: 'gateway_disabled' },
      });
    } finally {
      await off.cleanup();
    }
  });
});
