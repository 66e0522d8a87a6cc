import { lookup } from 'node:dns/promises';
import { isIP, createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * One confined server's way out: an HTTP proxy (CONNECT, and absolute-URI
 * requests for plain http) listening only for that server, on a Unix socket
 * bound into its namespace (Linux) or a loopback port only its profile may
 * reach (macOS). The endpoint itself says which server asks, so there is no
 * id for a server to present or steal. Only granted hosts pass; a name that
 * resolves to a loopback or private address passes only when the grant
 * names it so (`localhost:8080`, an IP literal), and the connection goes to
 * the address that was checked (no second lookup to rebind).
 */

export interface ProxyOptions {
  listen: { path: string } | { port: 0 };
  /** the net grants: `host` (ports 80 and 443), `host:port`, `*.domain` */
  allow: readonly string[];
  /** a refused or failed request, for the upstream's log */
  onRefused(target: string, why: string): void;
}

export interface NetProxy {
  /** the socket path, or `127.0.0.1:PORT` */
  endpoint: string;
  port: number | null;
  close(): Promise<void>;
}

interface Grant {
  host: string;
  wildcard: boolean;
  port: number | null;
}

const parseGrant = (g: string): Grant => {
  const m = /^(\*\.)?(.+?)(?::(\d+))?$/.exec(g.toLowerCase())!;
  return { wildcard: !!m[1], host: m[2]!, port: m[3] ? Number(m[3]) : null };
};

const named = (g: Grant, host: string) => (g.wildcard ? host.endsWith(`.${g.host}`) : host === g.host);
const portOk = (g: Grant, port: number) => (g.port === null ? port === 80 || port === 443 : g.port === port);
const isLocalName = (h: string) => h === 'localhost' || h.endsWith('.localhost');

/** Loopback, private, link-local, unspecified, CGNAT, unique-local: never reached by a name that merely resolves there. */
export function isPrivateAddress(a: string): boolean {
  if (isIP(a) === 4) {
    const [x, y] = a.split('.').map(Number) as [number, number];
    return (
      x === 0 ||
      x === 10 ||
      x === 127 ||
      (x === 100 && y >= 64 && y < 128) ||
      (x === 169 && y === 254) ||
      (x === 172 && y >= 16 && y < 32) ||
      (x === 192 && y === 168)
    );
  }
  const v = a.toLowerCase();
  if (v.startsWith('::ffff:')) return isPrivateAddress(v.slice(7));
  return v === '::' || v === '::1' || /^f[cd]/.test(v) || /^fe[89ab]/.test(v);
}

/** Where `host:port` may be reached, or why not. */
export async function decide(
  grants: readonly Grant[],
  host: string,
  port: number,
): Promise<{ ok: true; address: string } | { ok: false; why: string }> {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  const grant = grants.find((g) => named(g, h) && portOk(g, port));
  if (!grant) return { ok: false, why: 'not granted' };
  let address: string;
  if (isIP(h)) address = h;
  else if (isLocalName(h)) address = '127.0.0.1';
  else {
    const found = await lookup(h, { all: true }).catch(() => []);
    if (!found.length) return { ok: false, why: 'the name does not resolve' };
    // Every address the name has is checked: a name with one public and one private address is not a way in.
    if (found.some((f) => isPrivateAddress(f.address)))
      return { ok: false, why: 'it resolves to a loopback or private address (grant it as localhost:PORT or by IP)' };
    address = found[0]!.address;
  }
  if (isPrivateAddress(address) && !(isIP(h) || isLocalName(h)))
    return { ok: false, why: 'it is a loopback or private address' };
  return { ok: true, address };
}

const HEAD_LIMIT = 16 * 1024;

const answer = (s: Socket, status: string, text: string): void =>
  void s.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-gatehouse\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );

/** `host:port` of a CONNECT authority or an absolute http:// URL, or null. */
function targetOf(method: string, uri: string): { host: string; port: number; path: string | null } | null {
  if (method === 'CONNECT') {
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(uri);
    return m ? { host: m[1]!, port: Number(m[2]), path: null } : null;
  }
  try {
    const u = new URL(uri);
    if (u.protocol !== 'http:') return null;
    return { host: u.hostname, port: Number(u.port || 80), path: `${u.pathname}${u.search}` };
  } catch {
    return null;
  }
}

export async function openProxy(opts: ProxyOptions): Promise<NetProxy> {
  const grants = opts.allow.map(parseGrant);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > HEAD_LIMIT) answer(client, '431 Request Header Fields Too Large', 'request head too large\n');
        return;
      }
      client.off('data', onData);
      client.pause();
      void relay(client, head.subarray(0, end).toString('latin1'), head.subarray(end + 4));
    };
    client.on('data', onData);
  });

  async function relay(client: Socket, headText: string, rest: Buffer): Promise<void> {
    const [requestLine = '', ...headers] = headText.split('\r\n');
    const [method = '', uri = '', version = 'HTTP/1.1'] = requestLine.split(' ');
    const target = targetOf(method.toUpperCase(), uri);
    if (!target) {
      opts.onRefused(uri.slice(0, 200) || '(empty)', 'not a CONNECT or an absolute http:// request');
      return answer(client, '400 Bad Request', 'Gatehouse proxy: send CONNECT host:port or an absolute http:// URL\n');
    }
    const where = `${target.host}:${target.port}`;
    const d = await decide(grants, target.host, target.port);
    if (!d.ok) {
      opts.onRefused(where, d.why);
      return answer(client, '403 Forbidden', `Gatehouse: ${where} is not granted to this server (${d.why})\n`);
    }
    const upstream = createConnection({ host: d.address, port: target.port });
    sockets.add(upstream);
    upstream.on('close', () => (sockets.delete(upstream), client.destroy()));
    client.on('close', () => upstream.destroy());
    upstream.on('error', (e) => {
      opts.onRefused(where, `could not connect: ${e.message}`);
      if (!client.writableEnded) answer(client, '502 Bad Gateway', `Gatehouse: ${where} could not be reached\n`);
    });
    upstream.on('connect', () => {
      if (target.path === null) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      else {
        const kept = headers.filter((h) => !/^(proxy-connection|proxy-authorization|connection|keep-alive):/i.test(h));
        upstream.write(`${method} ${target.path} ${version}\r\n${[...kept, 'Connection: close'].join('\r\n')}\r\n\r\n`);
      }
      if (rest.length) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if ('path' in opts.listen) server.listen(opts.listen.path, resolve);
    else server.listen(0, '127.0.0.1', resolve);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : null;
  return {
    endpoint: 'path' in opts.listen ? opts.listen.path : `127.0.0.1:${port}`,
    port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
