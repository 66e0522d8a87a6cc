import { createPublicKey, verify } from 'node:crypto';

/** Verifies a certificate the way the client must: Ed25519 over the exact payload bytes, with a key from the JWKS. */
export function verifyCertificate(
  cert: { payload: string; sig: string; alg: string; kid: string },
  jwks: { keys: Array<{ kid: string; x: string }> },
) {
  const jwk = jwks.keys.find((k) => k.kid === cert.kid);
  if (!jwk) throw new Error(`kid ${cert.kid} is not in the JWKS`);
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  const bytes = Buffer.from(cert.payload, 'base64url');
  if (cert.alg !== 'ed25519' || !verify(null, bytes, key, Buffer.from(cert.sig, 'base64url')))
    throw new Error('certificate signature does not verify');
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return JSON.parse(bytes.toString('utf8')) as any;
}
