/**
 * What the cloud benchmarks share: one keep-alive node:http client, signed
 * calls with the tests' independent helper, a bare node:http JSON echo to
 * compare with, a licensed site, and a timer.
 */
import { createServer, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signHeaders, type SiteCredentials } from '../cloud/helpers/sign.ts';
import type { Harness } from '../cloud/helpers/cloud-harness.ts';
import { sendWith } from './http-send.ts';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

export const send = sendWith(agent);

export async function signed(
  creds: SiteCredentials,
  url: string,
  method: string,
  body: string,
  extra: Record<string, string> = {},
) {
  const r = await send(url, method, { ...signHeaders(creds, { method, url, body }), ...extra }, body);
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.text.slice(0, 200)}`);
  return r;
}

export async function echoServer(): Promise<{ url: string; close(): void }> {
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => {
        const text = JSON.stringify({ success: true, echo: JSON.parse(Buffer.concat(chunks).toString() || '{}') });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/echo`, close: () => s.close() };
}

export async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

export const closeClient = (): void => agent.destroy();
/** Drops the kept-alive connection (after a long pause the server may close it just as we reuse it). */
export const resetClient = (): void => agent.destroy();

/** A registered site with an active license of `plan`. */
export async function licensedSite(h: Harness, plan = 'pro'): Promise<{ site_id: string; creds: SiteCredentials }> {
  const reg = JSON.parse(
    (
      await send(
        `${h.gateway}/sites/register`,
        'POST',
        {},
        JSON.stringify({ url: 'https://bench.example', environment: 'production' }),
      )
    ).text,
  );
  const creds = { key_id: reg.key_id, secret: reg.secret };
  const lic = await h.op<{ license_key: string }>('licenses.create', { plan });
  await signed(creds, `${h.gateway}/license/activate`, 'POST', JSON.stringify({ license_key: lic.license_key }));
  return { site_id: reg.site_id, creds };
}
