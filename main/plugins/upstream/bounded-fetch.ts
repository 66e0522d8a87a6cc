import { ANSWER_TOO_LARGE } from './stdio-transport.ts';

/**
 * The `fetch` a Streamable HTTP upstream is reached with: what it answers a
 * request is bounded like a stdio upstream's messages (stdio-transport.ts).
 * A JSON answer over the bound is cut off as soon as it passes it and
 * replaced by a JSON-RPC error for the request it answers; on an event
 * stream, one event over the bound is dropped and (on a request's own
 * stream) replaced by that error. The session is not touched: the upstream
 * stays connected and its next call works.
 */
export function boundedFetch(
  limit: number,
  onOversized: (bytes: number) => void,
  base: typeof fetch = fetch,
): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    if (!res.body) return res;
    const id = requestIdOf(init?.body);
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const answer = (body: BodyInit) =>
      new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    if (type === 'application/json') {
      const read = await readUpTo(res.body, limit);
      if (read.ok) return answer(read.bytes as Uint8Array<ArrayBuffer>);
      onOversized(read.bytes);
      // cut off once past the bound: its whole size is not known
      return answer(id === undefined ? '{}' : JSON.stringify(tooLarge(id, null, limit)));
    }
    if (type === 'text/event-stream') return answer(res.body.pipeThrough(eventCap(limit, id, onOversized)));
    return res;
  };
}

function tooLarge(id: string | number, bytes: number | null, limit: number) {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: ANSWER_TOO_LARGE,
      message: `the answer was more than ${limit / 1024 / 1024} MiB, more than an upstream answer may be; it was dropped`,
      data: { bytes, limit_bytes: limit },
    },
  };
}

/** The id of the one JSON-RPC request a POST carries (the SDK sends one message a POST), or undefined. */
function requestIdOf(body: unknown): string | number | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const m = JSON.parse(body) as { id?: unknown; method?: unknown };
    return (typeof m.id === 'string' || typeof m.id === 'number') && typeof m.method === 'string' ? m.id : undefined;
  } catch {
    return undefined;
  }
}

async function readUpTo(
  body: ReadableStream<Uint8Array>,
  limit: number,
): Promise<{ ok: true; bytes: Uint8Array } | { ok: false; bytes: number }> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return { ok: false, bytes: size };
    }
    parts.push(value);
  }
  return { ok: true, bytes: Buffer.concat(parts) };
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Server-sent events passed through whole, each at most `limit` bytes: one
 * longer is dropped as it arrives and, when the stream answers request `id`,
 * replaced by the error answer for it.
 */
function eventCap(
  limit: number,
  id: string | number | undefined,
  onOversized: (bytes: number) => void,
): TransformStream<Uint8Array, Uint8Array> {
  let parts: Uint8Array[] = [];
  let size = 0;
  let dropping = false;
  // the last bytes seen, for a blank line split across chunks
  let carry = Buffer.alloc(0);
  const encoder = new TextEncoder();
  return new TransformStream({
    transform(chunk, out) {
      const scan = Buffer.concat([carry, chunk]);
      let from = 0;
      for (let i = carry.length; i < scan.length; i++) {
        // an event ends at a blank line: LF LF, or LF CR LF (CR LF CR LF)
        const end =
          scan[i] === LF && (scan[i - 1] === LF || (scan[i - 1] === CR && scan[i - 2] === LF))
            ? i + 1 - carry.length
            : -1;
        if (end < 0) continue;
        take(chunk.subarray(from, end), out);
        finish(out);
        from = end;
      }
      take(chunk.subarray(from), out);
      carry = Buffer.from(scan.subarray(Math.max(0, scan.length - 2)));
    },
    flush(out) {
      if (!dropping && size) out.enqueue(Buffer.concat(parts));
    },
  });

  function take(piece: Uint8Array, _out: TransformStreamDefaultController<Uint8Array>): void {
    if (!piece.length) return;
    size += piece.length;
    if (dropping) return;
    if (size > limit) {
      dropping = true;
      parts = [];
      return;
    }
    parts.push(piece);
  }

  function finish(out: TransformStreamDefaultController<Uint8Array>): void {
    if (dropping) {
      onOversized(size);
      if (id !== undefined)
        out.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(tooLarge(id, size, limit))}\n\n`));
    } else if (size) out.enqueue(Buffer.concat(parts));
    parts = [];
    size = 0;
    dropping = false;
  }
}
