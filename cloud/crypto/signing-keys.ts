import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { Jwk } from '../../main/contract/cloud/index.ts';

/** An Ed25519 key pair as the gateway keeps it (private part sealed at rest by the repository). */
export interface SigningKeyMaterial {
  kid: string;
  /** base64url of the 32-byte public key (the JWK `x`) */
  x: string;
  /** PKCS#8 DER of the private key */
  privateDer: Buffer;
}

export function generateSigningKey(): SigningKeyMaterial {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x!;
  return { kid: kidOf(x), x, privateDer: privateKey.export({ format: 'der', type: 'pkcs8' }) };
}

/** `ed_` + the first 16 base64url characters of SHA-256 over the public key bytes. */
export function kidOf(x: string): string {
  return `ed_${createHash('sha256').update(Buffer.from(x, 'base64url')).digest('base64url').slice(0, 16)}`;
}

export function toJwk(kid: string, x: string): Jwk {
  return { kty: 'OKP', crv: 'Ed25519', x, kid, use: 'sig' };
}

/** SHA-256 fingerprint of the public key, hex in pairs: what a person compares at connect. */
export function fingerprint(x: string): string {
  return createHash('sha256').update(Buffer.from(x, 'base64url')).digest('hex').match(/../g)!.join(':');
}

export class Signer {
  private readonly key: KeyObject;
  constructor(
    readonly kid: string,
    privateDer: Buffer,
  ) {
    this.key = createPrivateKey({ key: privateDer, format: 'der', type: 'pkcs8' });
  }
  sign(bytes: Buffer): string {
    return sign(null, bytes, this.key).toString('base64url');
  }
}
