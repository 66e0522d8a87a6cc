import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

/**
 * A small MCP server built with the SDK's stateless `createMcpHandler` (the
 * way the Gatehouse endpoint is built), behind a plain node:http front that
 * records every exchange and can answer the way the Gatehouse endpoint does
 * when something is wrong: 401 + WWW-Authenticate, 503 gateway_disabled,
 * 429 + Retry-After, a 502, or a connection dropped after the request.
 */

export interface Seen {
  httpMethod: string;
  rpcMethod: string | undefined;
  headers: IncomingMessage['headers'];
  /** The response was cut off before it finished (the bridge aborted it). */
  closedEarly: boolean;
}

export type Trouble =
  | {
      kind: 'status';
      status: 401 | 403 | 429 | 502 | 503;
      retryAfter?: string;
      dataCode?: string;
      message?: string;
      times?: number;
      onlyFor?: string;
    }
  | { kind: 'drop'; onlyFor?: string; times?: number }
  /** A 200 whose message never ends (one endless SSE line or JSON body), written until the bridge hangs up; `sent` counts the bytes. */
  | { kind: 'flood'; as: 'sse' | 'json'; onlyFor?: string; times?: number; sent?: number };

export interface TinyServer {
  url: string;
  port: number;
  seen: Seen[];
  /** When set, requests must carry `Authorization: Bearer <token>`. */
  token: string | undefined;
  trouble: Trouble | undefined;
  stop(): Promise<void>;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Deterministic text of `bytes` ASCII characters, so the client can check it arrived intact. */
export function bigText(bytes: number): string {
  const unit = 'gatehouse-bridge 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ\n';
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

function buildServer(): McpServer {
  const server = new McpServer({ name: 'tiny', version: '1.0.0' });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('big', { inputSchema: z.object({ bytes: z.number().int() }) }, async ({ bytes }) => ({
    content: [{ type: 'text', text: bigText(bytes) }],
  }));
  server.registerTool('slow', { inputSchema: z.object({ ms: z.number().int() }) }, async ({ ms }, ctx) => {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      ctx.mcpReq.signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve();
      });
    });
    return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
  });
  server.registerResource('note', 'tiny://note', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: 'a note' }],
  }));
  return server;
}

export async function tinyServer(opts: { token?: string; port?: number } = {}): Promise<TinyServer> {
  const handle = toNodeHandler(createMcpHandler(() => buildServer()));
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();

  const state: TinyServer = {
    url: '',
    port: 0,
    seen,
    token: opts.token,
    trouble: undefined,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };

  const http: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown;
    try {
      parsed = raw ? JSON.parse(raw) : undefined;
    } catch {
      parsed = undefined;
    }
    const rpcMethod = (parsed as { method?: string } | undefined)?.method;
    const entry: Seen = { httpMethod: req.method ?? '', rpcMethod, headers: req.headers, closedEarly: false };
    seen.push(entry);
    res.on('close', () => {
      if (!res.writableFinished) entry.closedEarly = true;
    });

    const t = state.trouble;
    if (t && (!t.onlyFor || t.onlyFor === rpcMethod)) {
      if (t.times !== undefined && --t.times <= 0) state.trouble = undefined;
      if (t.kind === 'drop') {
        req.socket.destroy();
        return;
      }
      if (t.kind === 'flood') {
        res.writeHead(200, { 'content-type': t.as === 'sse' ? 'text/event-stream' : 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 'a');
        res.write(
          t.as === 'sse'
            ? 'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'
            : '{"jsonrpc":"2.0","result":{"text":"',
        );
        t.sent = 0;
        const pump = () => {
          while (!res.destroyed) {
            t.sent! += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
        };
        pump();
        return;
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (t.retryAfter) headers['retry-after'] = t.retryAfter;
      if (t.status === 401) headers['www-authenticate'] = 'Bearer realm="gatehouse"';
      const code =
        t.dataCode ??
        {
          401: 'unauthorized',
          403: 'forbidden',
          429: 'rate_limited',
          502: 'upstream_error',
          503: 'service_unavailable',
        }[t.status];
      res.writeHead(t.status, headers).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: t.message ?? `refused: ${code}`, data: { code } },
        }),
      );
      return;
    }
    if (state.token !== undefined && req.headers.authorization !== `Bearer ${state.token}`) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="gatehouse"' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32001, message: 'unauthorized', data: { code: 'unauthorized' } },
        }),
      );
      return;
    }
    await handle(req, res, parsed);
  });
  http.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => http.listen(opts.port ?? 0, '127.0.0.1', () => r()));
  state.port = (http.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${state.port}/mcp`;
  return state;
}
