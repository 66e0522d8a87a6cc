/**
 * The request-signing wire contract (docs/cloud-gateway.md "Request signing"):
 * RFC 9421 HTTP Message Signatures with hmac-sha256 plus an RFC 9530
 * Content-Digest. Pure string functions: the client signs and the gateway
 * verifies with the same base, and another implementation can reproduce it
 * from this file alone. Hashing and HMAC are left to the caller.
 */

export const SIGNATURE_LABEL = 'gatehouse';
export const SIGNATURE_ALG = 'hmac-sha256';
/** The covered components, in this order. */
export const SIGNATURE_COMPONENTS = ['@method', '@authority', '@path', '@query', 'content-digest'] as const;
/** `created` must be within this many seconds of the gateway's clock, else token_expired. */
export const SIGNATURE_WINDOW_SECONDS = 300;
/** A nonce is accepted once per key within this many seconds. */
export const NONCE_TTL_SECONDS = 600;
/** 16 random bytes, base64url without padding. */
export const NONCE_PATTERN = /^[A-Za-z0-9_-]{22}$/;

export const HEADER_SIGNATURE = 'signature';
export const HEADER_SIGNATURE_INPUT = 'signature-input';
export const HEADER_CONTENT_DIGEST = 'content-digest';
export const HEADER_IDEMPOTENCY_KEY = 'idempotency-key';

export interface SignatureParams {
  /** unix seconds */
  created: number;
  /** 16 random bytes, base64url */
  nonce: string;
  keyid: string;
}

/** `Content-Digest` value for the base64 of the body's SHA-256. */
export function contentDigestValue(sha256Base64: string): string {
  return `sha-256=:${sha256Base64}:`;
}

/** The inner list and parameters: the Signature-Input member value and the `@signature-params` line. */
export function signatureParamsValue(p: SignatureParams): string {
  const components = SIGNATURE_COMPONENTS.map((c) => `"${c}"`).join(' ');
  return `(${components});created=${p.created};nonce="${p.nonce}";keyid="${p.keyid}";alg="${SIGNATURE_ALG}"`;
}

export interface SignatureBaseInput {
  method: string;
  /** the Host header as sent; lower-cased here */
  authority: string;
  /** the path as sent, without the query */
  path: string;
  /** the raw query as sent, without its `?` ('' when there is none) */
  query: string;
  /** the Content-Digest header value */
  contentDigest: string;
  /** the Signature-Input member value (signatureParamsValue, or as received) */
  params: string;
}

/** RFC 9421 section 2.5: one line per component, joined by \n, no trailing newline. */
export function signatureBase(i: SignatureBaseInput): string {
  return [
    `"@method": ${i.method.toUpperCase()}`,
    `"@authority": ${i.authority.toLowerCase()}`,
    `"@path": ${i.path}`,
    `"@query": ?${i.query}`,
    `"content-digest": ${i.contentDigest}`,
    `"@signature-params": ${i.params}`,
  ].join('\n');
}

/** `Signature-Input` header value. */
export const signatureInputHeader = (params: string): string => `${SIGNATURE_LABEL}=${params}`;
/** `Signature` header value for the base64 of the HMAC. */
export const signatureHeader = (macBase64: string): string => `${SIGNATURE_LABEL}=:${macBase64}:`;
