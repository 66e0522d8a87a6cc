import { describe, expect, it } from 'vitest';
import { idKey, peekServerMessage, readClientMessage } from '../../bridge/envelope.ts';
import { objectRanges, smallValue } from '../../bridge/json-peek.ts';
import { createBridgeLogger, Redactor } from '../../bridge/log.ts';
import { encodeFieldValue, modernHeaders } from '../../bridge/protocol-headers.ts';
import { MessageTooLarge } from '../../bridge/message-limit.ts';
import { type SseEvent, SseParser } from '../../bridge/sse.ts';

// The byte-level pieces the pump relies on, checked against what they must agree with.

const big = (n: number) => 'x'.repeat(n);

describe('json-peek', () => {
  it('finds every top-level value exactly where JSON.parse sees it, escapes and nesting included', () => {
    const doc = {
      jsonrpc: '2.0',
      method: 'tools/call',
      params: {
        name: 'quote"and\\slash',
        arguments: { text: 'a "quoted" \\\\" string }{ ][', list: [1, [2, { x: '}' }]], n: -1.5e3 },
      },
      id: 'req-\u00e9\u{1F600}',
      t: true,
      z: null,
    };
    const buf = Buffer.from(JSON.stringify(doc, null, 1));
    const ranges = objectRanges(buf)!;
    expect([...ranges.keys()]).toEqual(Object.keys(doc));
    for (const [k, v] of Object.entries(doc)) expect(smallValue(buf, ranges, k)).toEqual(v);
    const params = objectRanges(buf, ranges.get('params')![0])!;
    expect(smallValue(buf, params, 'name')).toBe('quote"and\\slash');
  });

  it('rejects what is not an object or is cut off', () => {
    expect(objectRanges(Buffer.from('[1,2]'))).toBeUndefined();
    expect(objectRanges(Buffer.from('{"a": "unterminated'))).toBeUndefined();
    expect(objectRanges(Buffer.from('{"a": 1'))).toBeUndefined();
    expect(objectRanges(Buffer.from('{}'))!.size).toBe(0);
  });

  it('leaves large values undecoded', () => {
    const buf = Buffer.from(JSON.stringify({ id: 3, result: { content: [{ type: 'text', text: big(200_000) }] } }));
    const ranges = objectRanges(buf)!;
    expect(smallValue(buf, ranges, 'result')).toBeUndefined();
    expect(smallValue(buf, ranges, 'id')).toBe(3);
  });
});

describe('reading client messages', () => {
  it.each([false, true])(
    'gets id, method and the header-relevant params alike for small and large messages (large: %s)',
    (large) => {
      const msg = {
        method: 'tools/call',
        params: {
          name: 'echo',
          arguments: { text: large ? big(100_000) : 'hi' },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
        },
        jsonrpc: '2.0',
        id: 7,
      };
      const read = readClientMessage(Buffer.from(JSON.stringify(msg)))!;
      expect(read).toMatchObject({ kind: 'request', id: 7, method: 'tools/call' });
      expect(modernHeaders(read)).toEqual({
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'echo',
      });
    },
  );

  it('classifies notifications and responses, and refuses what is not JSON-RPC', () => {
    expect(
      readClientMessage(Buffer.from('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}')),
    ).toMatchObject({ kind: 'notification', params: { requestId: 'a' } });
    expect(readClientMessage(Buffer.from('{"jsonrpc":"2.0","id":"s1","result":{}}'))).toMatchObject({
      kind: 'response',
      id: 's1',
    });
    expect(readClientMessage(Buffer.from('not json'))).toBeUndefined();
    expect(readClientMessage(Buffer.from('[1]'))).toBeUndefined();
    expect(idKey(1)).not.toBe(idKey('1'));
  });

  it('a 2025-era request gets no per-request headers', () => {
    expect(
      modernHeaders(
        readClientMessage(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}'))!,
      ),
    ).toBeUndefined();
  });

  it('encodes Mcp-Name values that are not plain ASCII', () => {
    expect(encodeFieldValue('get_weather')).toBe('get_weather');
    expect(encodeFieldValue('café')).toBe(`=?base64?${Buffer.from('café').toString('base64')}?=`);
    expect(encodeFieldValue(' padded')).toMatch(/^=\?base64\?/);
  });
});

describe('peeking at server messages', () => {
  it('tells responses from notifications and requests, small or large', () => {
    expect(
      peekServerMessage(Buffer.from('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}'))
        .isResponse,
    ).toBe(false);
    expect(
      peekServerMessage(Buffer.from('{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage"}')).isResponse,
    ).toBe(false);
    const large = peekServerMessage(
      Buffer.from(
        JSON.stringify({ result: { content: [{ type: 'text', text: big(300_000) }] }, jsonrpc: '2.0', id: 'q' }),
      ),
    );
    expect(large).toEqual({ isResponse: true, parsed: { id: 'q' } });
    const largeNote = peekServerMessage(
      Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: big(300_000) } })),
    );
    expect(largeNote.isResponse).toBe(false);
  });
});

describe('SSE parser', () => {
  function parse(chunks: string[]): { events: SseEvent[]; parser: SseParser } {
    const events: SseEvent[] = [];
    const parser = new SseParser((e) => events.push(e));
    for (const c of chunks) parser.push(Buffer.from(c));
    return { events, parser };
  }

  it('reassembles events split at any byte, with CRLF, comments, ids and retry', () => {
    const stream =
      ': keep-alive\r\nid: 1\r\nretry: 1500\r\nevent: message\r\ndata: {"a":1}\r\n\r\nid: 2\ndata: {"b":"\u00e9"}\n\n';
    const bytes = Buffer.from(stream);
    for (let cut = 1; cut < bytes.length; cut += 3) {
      const events: SseEvent[] = [];
      const p = new SseParser((e) => events.push(e));
      p.push(bytes.subarray(0, cut));
      p.push(bytes.subarray(cut));
      expect(events.map((e) => e.data.toString())).toEqual(['{"a":1}', '{"b":"\u00e9"}']);
      expect(p.lastEventId).toBe('2');
      expect(p.retryMs).toBe(1500);
    }
  });

  it('joins multi-line data and flags it; a priming event (id, empty data) dispatches nothing', () => {
    const { events, parser } = parse(['id: prime\ndata:\n\n', 'id: p2\n\n', 'data: {"x":\ndata: 1}\n\n']);
    expect(parser.lastEventId).toBe('p2');
    expect(events).toHaveLength(1);
    expect(events[0]!.multiLine).toBe(true);
    expect(JSON.parse(events[0]!.data.toString())).toEqual({ x: 1 });
  });
});

describe('SSE parser bound', () => {
  const collect = (max: number) => {
    const events: SseEvent[] = [];
    return { events, parser: new SseParser((e) => events.push(e), max) };
  };

  it('takes events within the bound one after another (the count starts again with each event)', () => {
    const { events, parser } = collect(200);
    parser.push(Buffer.from('data: 0123456789abcdef\n\n'));
    parser.push(Buffer.from('data: 0123456789abcdef\n\n'));
    expect(events.map((e) => e.data.toString())).toEqual(['0123456789abcdef', '0123456789abcdef']);
  });

  it('refuses a line that never ends, and many data lines of one event, past the bound', () => {
    const line = collect(16).parser;
    line.push(Buffer.from('data: 0123456789'));
    expect(() => line.push(Buffer.from('abcdefg'))).toThrow(MessageTooLarge);
    const lines = collect(400).parser;
    lines.push(Buffer.from('data: 01234567\ndata: 01234567\n'));
    expect(() => lines.push(Buffer.from('data: 0123456789\n'.repeat(3)))).toThrow(MessageTooLarge);
  });

  it('counts what a line costs, so endless empty data lines reach the bound too', () => {
    // 1 MiB of `data:` lines, no blank line: each one kept is a Buffer and a newline although its value is empty.
    const { events, parser } = collect(64 * 1024);
    parser.push(Buffer.from('id: 7\ndata: {}\n\n'));
    const chunk = Buffer.from('data:\n'.repeat(10_000));
    const err = (() => {
      try {
        for (let i = 0; i < 20; i++) parser.push(chunk);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(MessageTooLarge);
    expect((err as MessageTooLarge).lastEventId).toBe('7');
    expect(events).toHaveLength(1);
  });
});

describe('redaction', () => {
  it('masks registered secrets and token shapes in every line', () => {
    const lines: string[] = [];
    const redactor = new Redactor();
    redactor.add('s3cr3t-value-1234');
    const log = createBridgeLogger({ level: 'debug', sink: (l) => lines.push(l), redactor });
    log.warn('server said: s3cr3t-value-1234 and gth_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', {
      header: 'Authorization: Bearer abcdefghijkl',
      nested: { token: 'tok-123456789' },
    });
    expect(lines.join('')).not.toMatch(/s3cr3t|gth_A|abcdefghijkl|tok-123456789/);
    expect(lines.join('')).toContain('[redacted]');
  });

  it('respects the level', () => {
    const lines: string[] = [];
    const log = createBridgeLogger({ level: 'warn', sink: (l) => lines.push(l) });
    log.info('quiet');
    log.warn('loud');
    expect(lines).toEqual(['gatehouse-bridge warn: loud\n']);
  });
});
