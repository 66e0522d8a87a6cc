import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { ServerResponse } from 'node:http';
import { CONSOLE_CSP } from '../contract/csp.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.ico': 'image/x-icon',
};

const SECURITY_HEADERS = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/** Serves the built console (dist-renderer/) with its CSP; never outside that folder. */
export async function serveConsole(res: ServerResponse, dir: string, relPath: string): Promise<void> {
  const clean = normalize(relPath || 'index.html').replace(/^([/\\])+/, '');
  const file = join(dir, clean);
  if (clean.startsWith('..') || !(file === dir || file.startsWith(dir + sep))) {
    res.writeHead(404, SECURITY_HEADERS);
    return void res.end('not found');
  }
  const target = (await stat(file).catch(() => null))?.isFile() ? file : join(dir, 'index.html');
  const body = await readFile(target).catch(() => null);
  if (!body) {
    res.writeHead(503, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
    return void res.end('The console is not built yet: run `npm run build`, then reload.\n');
  }
  const immutable = target.includes(`${sep}assets${sep}`);
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Type': TYPES[extname(target)] ?? 'application/octet-stream',
    'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  res.end(body);
}
