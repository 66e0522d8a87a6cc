import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { signHeaders, type SiteCredentials } from './sign.ts';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** One raw HTTP exchange (node:http, so a test controls every byte and header). */
export function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res
          .on('data', (c: Buffer) => chunks.push(c))
          .on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // not JSON: the test sees the text
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
          });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface CallOptions {
  query?: string;
  body?: unknown;
  /** raw body text instead of JSON.stringify(body) */
  rawBody?: string;
  headers?: Record<string, string>;
  created?: number;
  nonce?: string;
  idempotencyKey?: string;
  /** change the request after signing: what an attacker on the wire would do */
  tamper?: { body?: string; query?: string };
}

/** A site's signed calls to `{gateway}/gateway/v1/...`. */
export class SiteClient {
  constructor(
    readonly gatewayUrl: string,
    readonly creds: SiteCredentials & { site_id: string },
  ) {}

  call(method: 'GET' | 'POST', path: string, o: CallOptions = {}): Promise<Answer> {
    const url = `${this.gatewayUrl}/${path}${o.query ? `?${o.query}` : ''}`;
    const body = o.rawBody ?? (o.body !== undefined ? JSON.stringify(o.body) : method === 'POST' ? '' : undefined);
    const signed = signHeaders(this.creds, { method, url, body, created: o.created, nonce: o.nonce });
    const sentUrl = o.tamper?.query !== undefined ? `${this.gatewayUrl}/${path}?${o.tamper.query}` : url;
    const sentBody = o.tamper?.body ?? body;
    const idem: Record<string, string> =
      path === 'usage/record' ? { 'Idempotency-Key': o.idempotencyKey ?? randomUUID() } : {};
    return rawRequest(sentUrl, method, { ...signed, ...idem, ...o.headers }, sentBody);
  }

  get = (path: string, o?: CallOptions) => this.call('GET', path, o);
  post = (path: string, body?: unknown, o?: CallOptions) => this.call('POST', path, { ...o, body });
}

export async function register(
  gatewayUrl: string,
  environment: 'production' | 'staging' = 'production',
  url = 'https://site.example',
): Promise<SiteClient> {
  const r = await rawRequest(`${gatewayUrl}/sites/register`, 'POST', {}, JSON.stringify({ url, environment }));
  if (r.status !== 200) throw new Error(`register failed: ${r.status} ${JSON.stringify(r.body)}`);
  return new SiteClient(gatewayUrl, { site_id: r.body.site_id, key_id: r.body.key_id, secret: r.body.secret });
}
