import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { Certificate, CertificatePayload, Jwk, type Jwks } from '../contract/cloud/certificate.ts';
import { ReleaseManifest } from '../contract/cloud/updates.ts';
import { GatehouseError } from '../core/errors.ts';
import { lazySchema } from '../contract/lazy-schema.ts';

/**
 * The gateway key the client trusts (docs/cloud-gateway.md "Certificates and keys"): pinned at
 * connect, from an explicit `--public-key` or the first key of `GET keys`,
 * and shown as a SHA-256 fingerprint a person can compare with the
 * vendor's (`gatehouse-cloud keys show` prints the same). Certificates
 * signed by any other key are refused, whatever the gateway publishes later.
 */
export const PinnedKey = lazySchema(() =>
  z.object({
    /** base64url of the 32-byte Ed25519 public key (the JWK `x`) */
    x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'an Ed25519 public key: 43 base64url characters'),
    /** the key id, when known (a bare key given by a person has none) */
    kid: z.string().max(100).nullable(),
  }),
);
export type PinnedKey = z.infer<typeof PinnedKey>;

/** SHA-256 over the public key bytes, hex in pairs. */
export function fingerprintOf(x: string): string {
  return createHash('sha256').update(Buffer.from(x, 'base64url')).digest('hex').match(/../g)!.join(':');
}

/**
 * What a person may pass as `--public-key`: the JWK as JSON (from `GET keys`
 * or `keys show --json`), or the bare `x`, optionally as `kid:x`.
 */
export function parsePublicKey(text: string): PinnedKey {
  const t = text.trim();
  if (t.length > 2000) throw badKey('it is too long');
  if (t.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(t);
    } catch {
      throw badKey('it looks like JSON but does not parse');
    }
    const jwk = Jwk.safeParse(json);
    if (!jwk.success)
      throw badKey('it is not an Ed25519 JWK ({"kty":"OKP","crv":"Ed25519","x":...,"kid":...,"use":"sig"})');
    return checked({ x: jwk.data.x, kid: jwk.data.kid });
  }
  const m = /^(?:([A-Za-z0-9_.-]{1,100}):)?([A-Za-z0-9_-]{43})$/.exec(t);
  if (!m) throw badKey('give the JWK as JSON, the key as 43 base64url characters, or kid:key');
  return checked({ x: m[2]!, kid: m[1] ?? null });
}

/** The first key a gateway publishes: what is pinned when no key was given. */
export function firstKey(jwks: Jwks): PinnedKey {
  const k = jwks.keys[0];
  if (!k)
    throw new GatehouseError(
      'gateway_unavailable',
      'the gateway publishes no signing key (GET keys is empty): it cannot sign certificates',
    );
  return checked({ x: k.x, kid: k.kid });
}

function checked(k: PinnedKey): PinnedKey {
  keyObject(k); // throws when the bytes are not an Ed25519 public key
  return k;
}

function keyObject(k: PinnedKey): KeyObject {
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: k.x }, format: 'jwk' });
  } catch {
    throw badKey('the bytes are not an Ed25519 public key');
  }
}

const badKey = (why: string) => new GatehouseError('invalid_value', `--public-key: ${why}`);

/** A real certificate or release manifest is a few KB; the cached certificate is kept in the state file. */
const MAX_PAYLOAD_CHARS = 256 * 1024;

export type Opened<T> = { ok: true; payload: T } | { ok: false; reason: string };

const SignedEnvelope = lazySchema(() =>
  z.object({
    payload: z.string(),
    sig: z.string().max(200),
    alg: z.literal('ed25519'),
    kid: z.string().max(100),
  }),
);

/**
 * Opens a gateway-signed envelope (`{payload, sig, alg: "ed25519", kid}`,
 * docs/cloud-gateway.md "Certificates and keys"; release manifests use the same): the signature
 * over the exact payload bytes is verified with the pinned key first, and
 * only then are the bytes parsed with `schema`.
 */
export function openSigned<T>(raw: unknown, pin: PinnedKey, schema: z.ZodType<T>, what: string): Opened<T> {
  const env = SignedEnvelope.safeParse(raw);
  if (!env.success) return { ok: false, reason: `the ${what} is not a signed envelope` };
  const c = env.data;
  if (c.payload.length > MAX_PAYLOAD_CHARS) return { ok: false, reason: `the ${what} is larger than any real one` };
  if (pin.kid !== null && c.kid !== pin.kid) {
    return {
      ok: false,
      reason: `the ${what} is signed by key ${c.kid}, not by the pinned key ${pin.kid}: the gateway's key changed or this is another gateway; reconnect with --public-key if the vendor confirms the new key`,
    };
  }
  const bytes = Buffer.from(c.payload, 'base64url');
  const sig = Buffer.from(c.sig, 'base64url');
  let good: boolean;
  try {
    good = sig.length === 64 && verify(null, bytes, keyObject(pin), sig);
  } catch {
    good = false;
  }
  if (!good)
    return {
      ok: false,
      reason: `the ${what}'s signature does not verify with the pinned key (fingerprint ${fingerprintOf(pin.x)})`,
    };
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, reason: `the signed ${what} is not JSON` };
  }
  const payload = schema.safeParse(json);
  return payload.success
    ? { ok: true, payload: payload.data }
    : { ok: false, reason: `the signed ${what} is not in the contract shape` };
}

/** A grant certificate, verified with the pinned key. */
export function verifyCertificate(raw: unknown, pin: PinnedKey): Opened<CertificatePayload> {
  const cert = Certificate.safeParse(raw);
  if (!cert.success) return { ok: false, reason: 'the certificate is not in the contract shape' };
  return openSigned(cert.data, pin, CertificatePayload, 'certificate');
}

/** A release manifest (updates/check, updates/package), verified with the pinned key before a field of it is read. */
export function verifyManifest(raw: unknown, pin: PinnedKey): Opened<ReleaseManifest> {
  return openSigned(raw, pin, ReleaseManifest, 'release manifest');
}
