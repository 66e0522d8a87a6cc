import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_STREAMS_PER_TOKEN } from '../../main/mcp/list-changed.ts';
import { startTestService } from '../helpers/service.ts';

/**
 * A 2026-07-28 `subscriptions/listen` stream the server ends is closed as
 * the spec closes one: the listen request's result as its last event, never
 * a cut connection. Cases: one stream past a token's bound (its oldest ends)
 * and shutdown.
 */
let svc: Awaited<ReturnType<typeof startTestService>>;
let token: string;
beforeAll(async () => {
  svc = await startTestService();
  token = (await svc.createToken({ label: 'listener' })).token;
});
afterAll(async () => svc?.cleanup());

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** Opens a listen stream with its own id; `text` resolves with everything it carried once it ends. */
async function listen(url: string, id: string): Promise<{ text: Promise<string> }> {
  const res = await fetch(url, {
    method: 'POST',
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: META },
    }),
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'subscriptions/listen',
    },
  });
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = res.body!.getReader();
  const first = await reader.read();
  let seen = new TextDecoder().decode(first.value);
  expect(seen).toContain('notifications/subscriptions/acknowledged');
  const text = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return seen;
      seen += new TextDecoder().decode(value);
    }
  })();
  return { text };
}

/** The last event of a stream, parsed. */
const lastEvent = (text: string) =>
  JSON.parse(
    text
      .trim()
      .split('\n\n')
      .at(-1)!
      .replace(/^event: message\ndata: /, ''),
  ) as Record<string, unknown>;

it("the oldest stream past the token's bound ends with the listen request's result", async () => {
  const streams = [];
  for (let i = 0; i <= MAX_STREAMS_PER_TOKEN; i++) streams.push(await listen(svc.mcpUrl, `listen-${i}`));
  const text = await streams[0]!.text;
  expect(lastEvent(text)).toMatchObject({
    jsonrpc: '2.0',
    id: 'listen-0',
    result: {
      resultType: 'complete',
      _meta: {
        'io.modelcontextprotocol/subscriptionId': 'listen-0',
        'io.modelcontextprotocol/serverInfo': { name: 'gatehouse' },
      },
    },
  });
});

it('at shutdown every open stream ends with its result', async () => {
  const own = await startTestService();
  try {
    const t = (await own.createToken({ label: 'shutdown' })).token;
    token = t;
    const a = await listen(own.mcpUrl, 'a');
    const b = await listen(own.mcpUrl, 7 as unknown as string);
    await own.stop();
    expect(lastEvent(await a.text)).toMatchObject({ id: 'a', result: { resultType: 'complete' } });
    expect(lastEvent(await b.text)).toMatchObject({ id: 7, result: { resultType: 'complete' } });
  } finally {
    await own.cleanup().catch(() => {});
  }
});
