import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import type * as HttpsModule from 'node:https';
import { noteMessage } from './memory.ts';

/**
 * The HTTP half: plain node:http(s) with a keep-alive agent. Measured against
 * fetch (undici) on the build machine, it loads ~40 ms sooner and spends about
 * a third of the CPU per request (0.13-0.23 ms against 0.36-0.80 ms for a
 * small SSE answer); the bridge needs no more than status, headers and bytes.
 */

export type HttpMethod = 'POST' | 'GET' | 'DELETE';

/** A failure before any response arrived. `unreached` means the server cannot have seen the request. */
export class NetworkError extends Error {
  override name = 'NetworkError';
  constructor(
    readonly code: string,
    readonly unreached: boolean,
    message: string,
  ) {
    super(message);
  }
}

// Errors that happen before a connection exists: nothing was delivered.
const UNREACHED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ETIMEDOUT_CONNECT',
]);
const CONNECT_TIMEOUT_MS = 10_000;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export class HttpSide {
  private readonly httpAgent = new Agent({ keepAlive: true, scheduling: 'lifo' });
  private https: { mod: typeof HttpsModule; agent: HttpsModule.Agent } | undefined;

  async send(
    url: URL,
    method: HttpMethod,
    headers: Record<string, string>,
    body: Buffer | undefined,
    signal: AbortSignal,
  ): Promise<IncomingMessage> {
    const secure = url.protocol === 'https:';
    if (secure && !this.https) {
      // Loaded on first use: most bridges talk plain HTTP to 127.0.0.1.
      const mod = await import('node:https');
      this.https = { mod, agent: new mod.Agent({ keepAlive: true, scheduling: 'lifo' }) };
    }
    if (body) headers['content-length'] = String(body.length);
    const loopback = LOOPBACK.has(url.hostname);
    return new Promise<IncomingMessage>((resolve, reject) => {
      const opts = { method, headers, signal, agent: secure ? this.https!.agent : this.httpAgent };
      const req = secure ? this.https!.mod.request(url, opts) : httpRequest(url, opts);
      let connected = false;
      let connectTimer: NodeJS.Timeout | undefined;
      req.on('socket', (socket) => {
        if (!socket.connecting || loopback) {
          // Loopback connects or is refused at once; only a new remote connection gets a timer.
          connected = !socket.connecting;
          if (socket.connecting) socket.once('connect', () => (connected = true));
          return;
        }
        connectTimer = setTimeout(() => {
          if (!connected)
            req.destroy(
              new NetworkError(
                'ETIMEDOUT_CONNECT',
                true,
                `no connection to ${url.host} within ${CONNECT_TIMEOUT_MS / 1000} s`,
              ),
            );
        }, CONNECT_TIMEOUT_MS);
        connectTimer.unref();
        socket.once('connect', () => {
          connected = true;
          clearTimeout(connectTimer);
        });
      });
      req.on('response', (res) => {
        // A body cut off mid-way also shows as 'close' without 'end', which readers handle;
        // without a listener, the 'error' that comes with it would end the process.
        res.on('error', () => undefined);
        resolve(res);
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (connectTimer) clearTimeout(connectTimer);
        if (e instanceof NetworkError) return reject(e);
        if (e.name === 'AbortError') return reject(new NetworkError('ABORTED', false, 'aborted'));
        const code = e.code ?? 'EUNKNOWN';
        reject(new NetworkError(code, !connected && UNREACHED.has(code), `${code}: ${e.message}`));
      });
      req.end(body);
    });
  }

  /** Drops idle keep-alive sockets so the process can exit. */
  close(): void {
    this.httpAgent.destroy();
    this.https?.agent.destroy();
  }
}

/**
 * Reads a whole body (error bodies, JSON responses). Past `limit` the rest is
 * dropped (an error body is only quoted), or, with `tooLarge`, the response is
 * destroyed and that error rejected (a message must be whole or not at all).
 */
export function readBody(res: IncomingMessage, limit = Infinity, tooLarge?: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= limit) chunks.push(c);
      else if (tooLarge) {
        chunks.length = 0;
        reject(tooLarge());
        res.destroy();
      }
    });
    res.on('end', () => {
      noteMessage(size);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    res.on('error', reject);
    res.on('close', () => {
      if (!res.complete) reject(new NetworkError('ECONNRESET', false, 'the response was cut off'));
    });
  });
}
