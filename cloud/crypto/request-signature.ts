import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  HEADER_CONTENT_DIGEST,
  HEADER_SIGNATURE,
  HEADER_SIGNATURE_INPUT,
  NONCE_PATTERN,
  SIGNATURE_ALG,
  SIGNATURE_COMPONENTS,
  SIGNATURE_LABEL,
  signatureBase,
} from '../../main/contract/cloud/index.ts';
import { CloudError } from '../errors.ts';
import { sha256Base64 } from './hash.ts';

/**
 * Reading and checking an RFC 9421 signature as docs/cloud-gateway.md "Request signing" fixes it. Parsing
 * is strict (one label, exactly our components and parameters) and happens
 * on the headers and raw body bytes before anything parses the body.
 */
export interface ParsedSignature {
  /** the Signature-Input member value as received: it is the `@signature-params` line */
  params: string;
  created: number;
  nonce: string;
  keyid: string;
  mac: Buffer;
  contentDigest: string;
}

const bad = (message: string) => new CloudError('signature_invalid', message);
const MAX_HEADER = 1024;

/** Splits a structured-field dictionary into its members (RFC 8941), respecting quotes, parentheses and byte sequences. */
export function dictionaryMembers(value: string): Map<string, string> {
  const out = new Map<string, string>();
  let depth = 0;
  let quoted = false;
  let bytes = false;
  let start = 0;
  const push = (end: number) => {
    const member = value.slice(start, end).trim();
    const eq = member.indexOf('=');
    if (eq > 0) out.set(member.slice(0, eq), member.slice(eq + 1));
  };
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (bytes) {
      if (c === ':') bytes = false;
    } else if (c === '"') quoted = true;
    else if (c === ':') bytes = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      push(i);
      start = i + 1;
    }
  }
  push(value.length);
  return out;
}

const COMPONENTS = `(${SIGNATURE_COMPONENTS.map((c) => `"${c}"`).join(' ')})`;
const PARAM = /;([a-z][a-z0-9_-]*)=(-?\d{1,15}|"[\x20\x21\x23-\x5b\x5d-\x7e]*")/y;

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  const s = Array.isArray(v) ? v.join(', ') : v;
  if (s !== undefined && s.length > MAX_HEADER) throw bad(`the ${name} header is longer than ${MAX_HEADER} characters`);
  return s;
}

export function parseSignature(headers: Record<string, string | string[] | undefined>): ParsedSignature {
  const input = header(headers, HEADER_SIGNATURE_INPUT);
  const signature = header(headers, HEADER_SIGNATURE);
  const digest = header(headers, HEADER_CONTENT_DIGEST);
  if (!input || !signature)
    throw bad(
      'the request is not signed: send Signature-Input and Signature headers (RFC 9421) as the gateway API reference describes',
    );
  if (!digest)
    throw bad('the request has no Content-Digest header: send sha-256 of the body (RFC 9530), an empty body included');
  const params = dictionaryMembers(input).get(SIGNATURE_LABEL);
  if (params === undefined) throw bad(`Signature-Input has no '${SIGNATURE_LABEL}' signature`);
  if (!params.startsWith(COMPONENTS))
    throw bad(`the '${SIGNATURE_LABEL}' signature must cover exactly ${COMPONENTS}, in that order`);
  const values = new Map<string, string>();
  PARAM.lastIndex = COMPONENTS.length;
  while (PARAM.lastIndex < params.length) {
    const at = PARAM.lastIndex;
    const m = PARAM.exec(params);
    if (!m || m.index !== at) throw bad('Signature-Input parameters are malformed');
    if (values.has(m[1]!)) throw bad(`Signature-Input repeats the parameter '${m[1]}'`);
    values.set(m[1]!, m[2]!);
  }
  const unquote = (name: string): string | undefined => {
    const v = values.get(name);
    return v?.startsWith('"') ? v.slice(1, -1) : undefined;
  };
  const createdText = values.get('created');
  const created = createdText !== undefined && /^\d+$/.test(createdText) ? Number(createdText) : NaN;
  const nonce = unquote('nonce');
  const keyid = unquote('keyid');
  const alg = unquote('alg');
  if (
    values.size !== 4 ||
    !Number.isSafeInteger(created) ||
    nonce === undefined ||
    keyid === undefined ||
    alg === undefined
  ) {
    throw bad('Signature-Input must carry exactly the parameters created, nonce, keyid and alg');
  }
  if (alg !== SIGNATURE_ALG) throw bad(`the signature algorithm must be ${SIGNATURE_ALG}`);
  if (!NONCE_PATTERN.test(nonce)) throw bad('the nonce must be 16 random bytes in base64url (22 characters)');
  if (keyid.length === 0 || keyid.length > 64) throw bad('the keyid is empty or too long');
  const sig = dictionaryMembers(signature).get(SIGNATURE_LABEL);
  const macMatch = sig?.match(/^:([A-Za-z0-9+/]+={0,2}):$/);
  if (!macMatch) throw bad(`the Signature header has no '${SIGNATURE_LABEL}' byte sequence`);
  const mac = Buffer.from(macMatch[1]!, 'base64');
  if (mac.length !== 32) throw bad('the signature is not an HMAC-SHA256 (32 bytes)');
  return { params, created, nonce, keyid, mac, contentDigest: digest };
}

/** Checks Content-Digest against the raw body bytes, in constant time. */
export function verifyContentDigest(contentDigest: string, body: Buffer): void {
  const member = dictionaryMembers(contentDigest).get('sha-256');
  const m = member?.match(/^:([A-Za-z0-9+/]+={0,2}):$/);
  if (!m) throw bad('Content-Digest has no sha-256 member');
  const sent = Buffer.from(m[1]!, 'base64');
  const actual = Buffer.from(sha256Base64(body), 'base64');
  if (sent.length !== actual.length || !timingSafeEqual(sent, actual))
    throw bad('Content-Digest does not match the body: the body was changed or the digest computed over other bytes');
}

export interface RequestTarget {
  method: string;
  /** the Host header */
  authority: string;
  /** the request target as sent: path and optional ?query */
  url: string;
}

/** Recomputes the HMAC over the signature base and compares it in constant time. */
export function verifyMac(sig: ParsedSignature, target: RequestTarget, secret: Buffer): void {
  const q = target.url.indexOf('?');
  const base = signatureBase({
    method: target.method,
    authority: target.authority,
    path: q < 0 ? target.url : target.url.slice(0, q),
    query: q < 0 ? '' : target.url.slice(q + 1),
    contentDigest: sig.contentDigest,
    params: sig.params,
  });
  const expected = createHmac('sha256', secret).update(base).digest();
  if (!timingSafeEqual(expected, sig.mac))
    throw bad(
      'the signature does not match: check the secret, and sign the method, Host, path and query exactly as sent',
    );
}
