import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * One HTTP exchange with the gateway over node:http(s): the exact bytes we
 * signed, the Host we signed, a connect timeout separate from the overall
 * deadline, a cap on the answer's size, an AbortSignal. It never retries;
 * the policy in cloud-http.ts does. Injected, so tests can put a fault proxy
 * in front of the real service instead of replacing the network.
 */
export interface TransportRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  connectTimeoutMs: number;
  /** the whole exchange, answer body included */
  timeoutMs: number;
  maxAnswerBytes: number;
  signal?: AbortSignal;
}

export interface TransportAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export type TransportFailureKind = 'connect_timeout' | 'timeout' | 'network' | 'too_large' | 'aborted';

export class TransportError extends Error {
  constructor(
    readonly kind: TransportFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

export type Transport = (req: TransportRequest) => Promise<TransportAnswer>;

const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: 8 }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: 8 }),
};

export const nodeTransport: Transport = (r) =>
  new Promise<TransportAnswer>((resolve, reject) => {
    if (r.signal?.aborted) return reject(new TransportError('aborted', 'the request was cancelled'));
    const https = r.url.protocol === 'https:';
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (err: TransportError | null, answer?: TransportAnswer) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      r.signal?.removeEventListener('abort', onAbort);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(answer!);
    };
    const onAbort = () => finish(new TransportError('aborted', 'the request was cancelled'));

    const req = (https ? httpsRequest : httpRequest)(r.url, {
      method: r.method,
      agent: https ? agents.https : agents.http,
      headers: { ...r.headers, 'Content-Length': String(r.body.length) },
    });
    timers.push(
      setTimeout(
        () => finish(new TransportError('timeout', `no complete answer within ${r.timeoutMs} ms`)),
        r.timeoutMs,
      ),
    );
    req.on('socket', (socket) => {
      // A reused keep-alive socket is already connected.
      if (!socket.connecting) return;
      const t = setTimeout(
        () => finish(new TransportError('connect_timeout', `could not connect within ${r.connectTimeoutMs} ms`)),
        r.connectTimeoutMs,
      );
      timers.push(t);
      socket.once('connect', () => clearTimeout(t));
    });
    req.on('error', (e: NodeJS.ErrnoException) => finish(new TransportError('network', networkMessage(e))));
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > r.maxAnswerBytes)
          return finish(new TransportError('too_large', `the answer is larger than ${r.maxAnswerBytes} bytes`));
        chunks.push(c);
      });
      res.on('error', (e: NodeJS.ErrnoException) => finish(new TransportError('network', networkMessage(e))));
      res.on('aborted', () =>
        finish(new TransportError('network', 'the connection closed before the answer was complete')),
      );
      res.on('end', () => {
        if (!res.complete)
          return finish(new TransportError('network', 'the connection closed before the answer was complete'));
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers))
          if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
        finish(null, { status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
      });
    });
    r.signal?.addEventListener('abort', onAbort, { once: true });
    req.end(r.body);
  });

/** A message that names what happened without the OS's stack of details. */
function networkMessage(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'the gateway refused the connection (is it running? is the URL right?)';
    case 'ECONNRESET':
      return 'the connection was reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the gateway host name could not be resolved';
    case 'ETIMEDOUT':
      return 'the connection timed out';
    default:
      return e.code ? `network error (${e.code})` : `network error (${e.message.slice(0, 100)})`;
  }
}
