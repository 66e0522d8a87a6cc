/**
 * TEST-ONLY reverse proxy: adds `Authorization: Bearer <token>` to every request and
 * forwards it to a Gatehouse MCP URL. Clients that cannot send headers (the official
 * conformance suite, the MCP Inspector CLI 0.15) talk to this instead of the gateway.
 * The product itself has no unauthenticated mode; this file lives under test/ for that reason.
 *
 * Everything else passes through untouched, Host and Origin included, so the gateway's
 * DNS-rebinding and Origin checks judge what the client really sent. Bodies are piped
 * both ways, so SSE responses stream event by event.
 *
 * As a script: `npx tsx test/helpers/auth-proxy.ts <target-mcp-url> [token]` prints the
 * proxy's URL on stdout (one line) and runs until SIGINT/SIGTERM. Without the token
 * argument it reads GATEHOUSE_TOKEN, which keeps the token out of `ps` output.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface AuthProxy {
  /** the proxy's URL, with the target's path (so clients use it exactly like the MCP URL) */
  url: string;
  close(): Promise<void>;
}

// Connection-scoped headers a proxy must not forward (RFC 9110 section 7.6.1).
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
]);

function forwardableHeaders(raw: readonly string[], token: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower === 'authorization') continue;
    out.push(name, raw[i + 1] as string);
  }
  out.push('Authorization', `Bearer ${token}`);
  return out;
}

/** `seen` gets each request's raw headers as they arrived (a test checking what a client sent). */
export async function startAuthProxy(
  targetMcpUrl: string,
  token: string,
  seen?: (rawHeaders: readonly string[]) => void,
): Promise<AuthProxy> {
  const target = new URL(targetMcpUrl);
  if (target.protocol !== 'http:')
    throw new Error(`auth proxy: only http:// targets are supported, got ${target.protocol}`);
  const sockets = new Set<Socket>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen?.(req.rawHeaders);
    // Raw headers keep the client's exact Host and Origin (and their case).
    const upstream = httpRequest({
      host: target.hostname,
      port: target.port || 80,
      method: req.method,
      path: req.url,
      headers: forwardableHeaders(req.rawHeaders, token) as unknown as Record<string, string>,
      setHost: false,
    });
    upstream.on('response', (up) => {
      const headers: string[] = [];
      for (let i = 0; i + 1 < up.rawHeaders.length; i += 2) {
        const name = up.rawHeaders[i] as string;
        if (!HOP_BY_HOP.has(name.toLowerCase())) headers.push(name, up.rawHeaders[i + 1] as string);
      }
      res.writeHead(up.statusCode ?? 502, up.statusMessage, headers);
      res.flushHeaders();
      up.pipe(res);
      // A client that goes away ends the upstream stream too (SSE would otherwise linger).
      res.on('close', () => up.destroy());
    });
    upstream.on('error', (e) => {
      if (res.headersSent) {
        res.destroy(e);
        return;
      }
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(`auth proxy: upstream ${target.host} failed: ${e.message}`);
    });
    req.on('aborted', () => upstream.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}${target.pathname}${target.search}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

async function main(argv: string[]): Promise<void> {
  const [target, tokenArg] = argv;
  const token = tokenArg ?? process.env.GATEHOUSE_TOKEN;
  if (!target || !token) {
    process.stderr.write(
      'usage: tsx test/helpers/auth-proxy.ts <target-mcp-url> [token]   (token defaults to $GATEHOUSE_TOKEN)\n',
    );
    process.exit(2);
  }
  const proxy = await startAuthProxy(target, token);
  process.stdout.write(`${proxy.url}\n`);
  const stop = () => void proxy.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`auth proxy: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
