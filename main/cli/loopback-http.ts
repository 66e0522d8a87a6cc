import { connect, type Socket } from 'node:net';

/**
 * One HTTP/1.1 exchange with the service on this machine, over a plain TCP socket: the CLI's only HTTP client.
 * A command sends one request and reads one answer, so this is all it needs: no agent, no keep-alive, no
 * redirects. node:http's client (its agent, parser and message streams) took about 6 ms of each command sent to a
 * running service, which takes some 65 ms in all (docs/performance.md, "Start-up").
 *
 * The answer is read strictly: a status line, header fields, and a body framed by `Transfer-Encoding: chunked`,
 * `Content-Length` or the end of the connection. An answer that ends early (the service died mid-answer, a
 * download whose last chunk never came) is an error, never a short body taken as whole.
 */

export interface RawResponse {
  status: number;
  ok: boolean;
  /** the body as it arrives, its framing removed */
  body: AsyncIterable<Uint8Array>;
  json(): Promise<unknown>;
}

// Bounds on what the other end may make us hold before it has said anything we can use.
const MAX_HEAD_BYTES = 64 * 1024;
const MAX_CHUNK_LINE_BYTES = 1024;

// What a header field may not hold (RFC 9110 5.5): a line break would start a header of its own, and node:http
// refused the other control characters and anything beyond Latin-1 too. The path needs no check: URL encodes them.
const NOT_FIELD_TEXT = /[^\t\x20-\x7e\x80-\xff]/;

type Reader = AsyncIterator<Buffer>;

export function exchange(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawResponse> {
  const target = new URL(url);
  if (target.protocol !== 'http:') return Promise.reject(new Error(`not an http:// address: ${target.protocol}`));
  const path = `${target.pathname}${target.search}`;
  const fields: Record<string, string> = { Host: target.host, Connection: 'close', ...headers };
  if (body !== undefined) fields['Content-Length'] = String(Buffer.byteLength(body));
  for (const [name, value] of Object.entries(fields))
    if (NOT_FIELD_TEXT.test(name) || NOT_FIELD_TEXT.test(value))
      return Promise.reject(new Error(`a control character in the request's ${JSON.stringify(name)} header`));
  const head = `${method} ${path} HTTP/1.1\r\n${Object.entries(fields)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  // WHATWG URLs keep an IPv6 host in brackets; the socket wants the bare address.
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  const socket = connect({ host, port: Number(target.port || 80) });
  // Not end(): the service takes a request whose sender has already shut its side as given up on, as node:http's
  // server does for a half-closed connection. It closes the connection once it has answered (Connection: close).
  socket.write(body === undefined ? head : head + body);
  return readAnswer(socket, socketReader(socket));
}

// What the reader holds before it pauses the socket: a download is read as fast as it is written out, not into memory.
const HIGH_WATER_BYTES = 64 * 1024;

/**
 * The socket's bytes pulled one piece at a time, paused while unread ones pile up. Not the stream's own async
 * iterator: building that loads and runs a good part of node:stream's machinery, most of a millisecond of a command
 * that takes some 27 ms (docs/performance.md "Start-up").
 */
function socketReader(socket: Socket): Reader {
  const pieces: Buffer[] = [];
  let held = 0;
  let ended = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const woken = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  socket.on('data', (piece: Buffer) => {
    pieces.push(piece);
    held += piece.length;
    if (held >= HIGH_WATER_BYTES) socket.pause();
    woken();
  });
  socket.on('end', () => ((ended = true), woken()));
  socket.on('close', () => ((ended = true), woken()));
  socket.on('error', (e) => ((failure = e), woken()));
  return {
    async next(): Promise<IteratorResult<Buffer>> {
      while (!pieces.length && !ended && !failure) await new Promise<void>((r) => (wake = r));
      const piece = pieces.shift();
      if (piece) {
        held -= piece.length;
        if (held < HIGH_WATER_BYTES && socket.isPaused()) socket.resume();
        return { value: piece, done: false };
      }
      if (failure) throw failure;
      return { value: undefined, done: true };
    },
  };
}

async function readAnswer(socket: Socket, reader: Reader): Promise<RawResponse> {
  let buf: Buffer = Buffer.alloc(0);
  let end: number;
  try {
    while ((end = buf.indexOf('\r\n\r\n')) < 0) {
      if (buf.length > MAX_HEAD_BYTES) throw new Error(`the answer's header is over ${MAX_HEAD_BYTES} bytes`);
      const next = await reader.next();
      if (next.done) throw new Error('the connection closed before a complete answer');
      buf = buf.length ? Buffer.concat([buf, next.value]) : next.value;
    }
  } catch (e) {
    socket.destroy();
    throw e;
  }
  const [statusLine = '', ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine)?.[1];
  const fields = status === undefined ? undefined : parseFields(lines);
  if (status === undefined || fields === undefined) {
    socket.destroy();
    throw new Error(`not an HTTP/1.1 answer: ${JSON.stringify(statusLine.slice(0, 80))}`);
  }
  const code = Number(status);
  let framed: AsyncGenerator<Buffer>;
  try {
    framed = framedBody(code, fields, buf.subarray(end + 4), reader);
  } catch (e) {
    socket.destroy();
    throw e;
  }
  const body = withClose(socket, framed);
  return {
    status: code,
    ok: code >= 200 && code < 300,
    body,
    async json() {
      const chunks: Uint8Array[] = [];
      for await (const c of body) chunks.push(c);
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    },
  };
}

/** Header fields by lower-case name (repeats joined with ", ", as RFC 9110 allows); undefined for a malformed line. */
function parseFields(lines: string[]): Map<string, string> | undefined {
  const fields = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    const before = fields.get(name);
    fields.set(name, before === undefined ? value : `${before}, ${value}`);
  }
  return fields;
}

function framedBody(
  status: number,
  fields: Map<string, string>,
  first: Buffer,
  reader: Reader,
): AsyncGenerator<Buffer> {
  if (status === 204 || status === 304) return (async function* () {})();
  if (/(?:^|,)\s*chunked\s*$/i.test(fields.get('transfer-encoding') ?? '')) return dechunked(first, reader);
  const length = fields.get('content-length');
  if (length === undefined) return untilClose(first, reader);
  if (!/^\d{1,15}$/.test(length)) throw new Error(`a malformed Content-Length: ${JSON.stringify(length)}`);
  return exactly(Number(length), first, reader);
}

/** The body's bytes, and the socket closed once they are read or the reader stops early. */
async function* withClose(socket: Socket, body: AsyncGenerator<Buffer>): AsyncGenerator<Uint8Array> {
  try {
    yield* body;
  } finally {
    socket.destroy();
  }
}

async function* untilClose(first: Buffer, reader: Reader): AsyncGenerator<Buffer> {
  if (first.length) yield first;
  for (let next = await reader.next(); !next.done; next = await reader.next()) yield next.value;
}

async function* exactly(length: number, first: Buffer, reader: Reader): AsyncGenerator<Buffer> {
  let left = length;
  let buf = first;
  while (left > 0) {
    if (!buf.length) {
      const next = await reader.next();
      if (next.done) throw new Error(`the answer ended ${left} bytes short of its Content-Length`);
      buf = next.value;
    }
    const part = buf.subarray(0, left);
    left -= part.length;
    buf = buf.subarray(part.length);
    yield part;
  }
}

async function* dechunked(first: Buffer, reader: Reader): AsyncGenerator<Buffer> {
  let buf = first;
  const more = async () => {
    const next = await reader.next();
    if (next.done) throw new Error('the answer ended before its last chunk');
    buf = buf.length ? Buffer.concat([buf, next.value]) : next.value;
  };
  for (;;) {
    let eol: number;
    while ((eol = buf.indexOf('\r\n')) < 0) {
      if (buf.length > MAX_CHUNK_LINE_BYTES) throw new Error('a chunk size line is too long');
      await more();
    }
    const sizeText = buf.subarray(0, eol).toString('latin1').split(';')[0]!.trim();
    if (!/^[0-9a-fA-F]{1,12}$/.test(sizeText)) throw new Error(`a malformed chunk size: ${JSON.stringify(sizeText)}`);
    buf = buf.subarray(eol + 2);
    const size = parseInt(sizeText, 16);
    // The last chunk; trailer fields, if any, are not read: the connection closes after this answer.
    if (size === 0) return;
    for (let left = size; left > 0;) {
      if (!buf.length) await more();
      const part = buf.subarray(0, left);
      left -= part.length;
      buf = buf.subarray(part.length);
      yield part;
    }
    while (buf.length < 2) await more();
    if (buf[0] !== 0x0d || buf[1] !== 0x0a) throw new Error('a chunk not followed by CRLF');
    buf = buf.subarray(2);
  }
}
