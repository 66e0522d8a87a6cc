import { createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * An independent reproduction of docs/cloud-gateway.md "Request signing",
 * written from the text alone: it imports nothing of the gateway's (not its
 * verifier, not the contract's base builder), so a test that passes shows the
 * wire contract, not our code agreeing with itself.
 */
export interface SiteCredentials {
  key_id: string;
  secret: string;
}

export interface SignOptions {
  method: string;
  /** full URL of the request */
  url: string;
  body?: string | Buffer;
  /** unix seconds (default: now) */
  created?: number;
  /** 16 random bytes base64url (default: fresh) */
  nonce?: string;
}

export function contentDigest(body: Buffer): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

export function signatureBaseFromDesign(
  method: string,
  authority: string,
  path: string,
  rawQuery: string,
  digest: string,
  paramsLine: string,
): string {
  // "lines joined by \n, no trailing newline"
  return [
    `"@method": ${method}`,
    `"@authority": ${authority.toLowerCase()}`,
    `"@path": ${path}`,
    `"@query": ?${rawQuery}`,
    `"content-digest": ${digest}`,
    `"@signature-params": ${paramsLine}`,
  ].join('\n');
}

export function signHeaders(creds: SiteCredentials, o: SignOptions): Record<string, string> {
  const u = new URL(o.url);
  const body = o.body === undefined ? Buffer.alloc(0) : Buffer.from(o.body);
  const digest = contentDigest(body);
  const created = o.created ?? Math.floor(Date.now() / 1000);
  const nonce = o.nonce ?? randomBytes(16).toString('base64url');
  const params = `("@method" "@authority" "@path" "@query" "content-digest");created=${created};nonce="${nonce}";keyid="${creds.key_id}";alg="hmac-sha256"`;
  const base = signatureBaseFromDesign(
    o.method.toUpperCase(),
    u.host,
    u.pathname,
    u.search.replace(/^\?/, ''),
    digest,
    params,
  );
  const mac = createHmac('sha256', Buffer.from(creds.secret, 'utf8')).update(base).digest('base64');
  return { 'Content-Digest': digest, 'Signature-Input': `gatehouse=${params}`, Signature: `gatehouse=:${mac}:` };
}
