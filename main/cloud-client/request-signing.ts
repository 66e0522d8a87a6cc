import { createHash, createHmac, randomBytes } from 'node:crypto';
import {
  contentDigestValue,
  signatureBase,
  signatureHeader,
  signatureInputHeader,
  signatureParamsValue,
} from '../contract/cloud/signing.ts';

/**
 * Signs one request as docs/cloud-gateway.md "Request signing" says, with the
 * contract's signature-base builder: RFC 9530 Content-Digest over the exact
 * body bytes (an empty body included), RFC 9421 hmac-sha256 over the base,
 * a fresh nonce each time. Every attempt of a retried request is signed
 * anew (a nonce is accepted once).
 */
export interface SigningKey {
  key_id: string;
  secret: string;
}

export interface SignInput {
  method: string;
  url: URL;
  body: Buffer;
  /** unix seconds, already corrected by the clock offset */
  created: number;
  nonce?: string;
}

export function signRequest(key: SigningKey, i: SignInput): Record<string, string> {
  const digest = contentDigestValue(createHash('sha256').update(i.body).digest('base64'));
  const params = signatureParamsValue({
    created: i.created,
    nonce: i.nonce ?? randomBytes(16).toString('base64url'),
    keyid: key.key_id,
  });
  const base = signatureBase({
    method: i.method,
    // URL.host is what node:http sends as Host (the port only when it is not the default)
    authority: i.url.host,
    path: i.url.pathname,
    query: i.url.search.replace(/^\?/, ''),
    contentDigest: digest,
    params,
  });
  const mac = createHmac('sha256', Buffer.from(key.secret, 'utf8')).update(base, 'utf8').digest('base64');
  return { 'Content-Digest': digest, 'Signature-Input': signatureInputHeader(params), Signature: signatureHeader(mac) };
}
