import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { httpDispatch } from '../../main/cli/admin-client.ts';
import { exchange } from '../../main/cli/loopback-http.ts';
import type { RuntimeInfo } from '../../main/contract/health.ts';
import { VERSION } from '../../main/version.ts';
import type { Download } from '../../main/contract/api.ts';
import { createLogger } from '../../main/lib/logger.ts';
import { download } from '../../main/rest/admin-routes.ts';

// A download action's file (the audit export) that fails part-way must reach the client as broken, not as a
// shorter file: real HTTP on 127.0.0.1, read by the CLI's client (main/cli/loopback-http.ts) and by fetch.

let server: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

async function serving(file: Download): Promise<{ url: string; log: () => string }> {
  const lines = new PassThrough();
  let logged = '';
  lines.on('data', (c: Buffer) => (logged += c.toString('utf8')));
  const log = createLogger({ level: 'info', stream: lines });
  server = createServer((_req, res) => void download(res, file, log));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/export`, log: () => logged };
}

const file = (write: Download['write']): Download => ({ filename: 'audit.csv', content_type: 'text/csv', write });

async function read(body: AsyncIterable<Uint8Array>): Promise<string> {
  let text = '';
  for await (const c of body) text += Buffer.from(c).toString('utf8');
  return text;
}

describe('a download that fails part-way', () => {
  it('is cut off, so neither the CLI nor a browser takes the part for the whole file; the failure is logged', async () => {
    const failing = file(async (out) => {
      out.write('id,at\n1,2026-12-01\n');
      // the next audit file could not be read
      await new Promise((r) => setImmediate(r));
      throw new Error('EIO: i/o error, read');
    });
    const { url, log } = await serving(failing);

    const res = await exchange(url, 'GET', {});
    expect(res.status).toBe(200);
    await expect(read(res.body)).rejects.toThrow('the answer ended before its last chunk');

    // `gatehouse audit export` says so, as a retryable error, instead of ending as if the file were whole.
    const runtime = { base_url: new URL(url).origin, version: VERSION } as RuntimeInfo;
    const out = new PassThrough();
    await expect(httpDispatch(runtime, 'key').download('audit.export', { format: 'csv' }, out)).rejects.toMatchObject({
      code: 'service_unavailable',
      message: expect.stringContaining(
        'broke off (the answer ended before its last chunk): what was written is incomplete',
      ),
    });

    const viaFetch = await fetch(url);
    await expect(viaFetch.text()).rejects.toThrow();
    expect(log()).toContain('download failed');
    expect(log()).toContain('EIO: i/o error, read');
  });

  it('that fails before its first byte is broken off too, not taken for no answer', async () => {
    const { url } = await serving(
      file(async () => {
        throw new Error('EACCES: permission denied, open');
      }),
    );
    const res = await exchange(url, 'GET', {});
    expect(res.status).toBe(200);
    await expect(read(res.body)).rejects.toThrow('the answer ended before its last chunk');
  });

  it('ends as a whole file when it does not fail', async () => {
    const { url } = await serving(
      file(async (out) => {
        out.write('id,at\n');
        out.write('1,2026-12-01\n');
      }),
    );
    expect(await read((await exchange(url, 'GET', {})).body)).toBe('id,at\n1,2026-12-01\n');
    expect(await (await fetch(url)).text()).toBe('id,at\n1,2026-12-01\n');
  });
});
