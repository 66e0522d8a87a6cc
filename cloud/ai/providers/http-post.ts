import http from 'node:http';
import https from 'node:https';

/**
 * One POST to a provider over node:http(s), with what `fetch` does not give
 * us separately: a connect timeout, an overall deadline that also covers
 * reading a long stream, a cap on the bytes we are willing to hold, and a
 * reason for every way it can end early. The request headers (which carry the
 * provider key) are never part of an error.
 */

export type TransportFailure = 'connect_timeout' | 'timeout' | 'network' | 'disconnected' | 'too_large' | 'aborted';

export class TransportError extends Error {
  constructor(
    readonly failure: TransportFailure,
    message: string,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

export interface PostOptions {
  url: URL;
  headers: Record<string, string>;
  body: string;
  connectTimeoutMs: number;
  /** from sending the request to the last byte of the answer */
  timeoutMs: number;
  maxBodyBytes: number;
  signal?: AbortSignal;
}

export interface PostResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** the body, chunk by chunk; throws a TransportError when it ends early */
  chunks: AsyncGenerator<Buffer, void, undefined>;
  /** stops the timers and drops the connection if the body was not read to the end; safe to call twice */
  close(): void;
}

export function post(opts: PostOptions): Promise<PostResponse> {
  const controller = new AbortController();
  const abortWith = (e: TransportError): void => {
    if (!controller.signal.aborted) controller.abort(e);
  };
  const overall = setTimeout(
    () => abortWith(new TransportError('timeout', `no complete answer within ${opts.timeoutMs} ms`)),
    opts.timeoutMs,
  );
  let connectTimer: NodeJS.Timeout | undefined;
  const onCallerAbort = (): void => abortWith(new TransportError('aborted', 'the call was cancelled'));
  if (opts.signal?.aborted) onCallerAbort();
  else opts.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const release = (): void => {
    clearTimeout(overall);
    clearTimeout(connectTimer);
    opts.signal?.removeEventListener('abort', onCallerAbort);
  };
  const reasonOr = (fallback: () => TransportError): TransportError =>
    controller.signal.reason instanceof TransportError ? controller.signal.reason : fallback();

  return new Promise<PostResponse>((resolve, reject) => {
    if (controller.signal.aborted) {
      release();
      reject(reasonOr(() => new TransportError('aborted', 'the call was cancelled')));
      return;
    }
    const lib = opts.url.protocol === 'https:' ? https : http;
    const req = lib.request(opts.url, {
      method: 'POST',
      headers: { ...opts.headers, 'content-length': String(Buffer.byteLength(opts.body)) },
      signal: controller.signal,
    });
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      connectTimer = setTimeout(
        () => abortWith(new TransportError('connect_timeout', `no connection within ${opts.connectTimeoutMs} ms`)),
        opts.connectTimeoutMs,
      );
      socket.once('connect', () => clearTimeout(connectTimer));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      release();
      // Only the error code: a message may quote the URL, never the headers, but keep it plain.
      reject(
        reasonOr(
          () => new TransportError('network', `could not reach the provider (${err.code ?? 'connection error'})`),
        ),
      );
    });
    req.on('response', (res) => {
      clearTimeout(connectTimer);
      const close = (): void => {
        release();
        if (!res.complete) res.destroy();
      };
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        chunks: readBody(res, opts.maxBodyBytes, reasonOr, close),
        close,
      });
    });
    req.end(opts.body);
  });
}

async function* readBody(
  res: http.IncomingMessage,
  maxBytes: number,
  reasonOr: (fallback: () => TransportError) => TransportError,
  close: () => void,
): AsyncGenerator<Buffer, void, undefined> {
  let seen = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      seen += chunk.length;
      if (seen > maxBytes) throw new TransportError('too_large', `the answer is larger than ${maxBytes} bytes`);
      yield chunk;
    }
    if (!res.complete)
      throw new TransportError('disconnected', 'the provider closed the connection before the answer was complete');
  } catch (e) {
    if (e instanceof TransportError) throw e;
    throw reasonOr(
      () => new TransportError('disconnected', 'the provider closed the connection before the answer was complete'),
    );
  } finally {
    close();
  }
}

/** The whole body as text (for error answers and non-streaming calls), within the same limits. */
export async function readText(chunks: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(c);
  return Buffer.concat(parts).toString('utf8');
}
