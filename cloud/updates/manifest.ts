import { createPublicKey, verify } from 'node:crypto';
import { MANIFEST_TYPE, ReleaseManifest, SignedManifest, type ReleaseFile } from '../../main/contract/cloud/updates.ts';
import { sameSha512, type FileDigest } from './file-hash.ts';

/**
 * Build, sign and open release manifests (docs/cloud-gateway-updates.md).
 * Signing is injected (the gateway passes the gateway's rotating key ring), so
 * this module holds no key. Opening verifies the signature over the exact
 * payload bytes with a published (or pinned) key before parsing anything.
 */

/** Signs bytes with the gateway's current Ed25519 key: base64url signature and the key's id. */
export type SignBytes = (bytes: Buffer) => Promise<{ sig: string; kid: string }> | { sig: string; kid: string };

/** A public key as the JWKS publishes it (`x` is base64url of the 32 raw bytes). */
export interface VerifyKey {
  kid: string;
  x: string;
}

export interface ReleaseInput {
  product: string;
  channel: string;
  version: string;
  released_at: string;
  staging_percentage?: number;
  notes?: string | null;
  files: ReleaseFile[];
}

export function buildManifest(r: ReleaseInput, issuedAt: Date): ReleaseManifest {
  return ReleaseManifest.parse({
    type: MANIFEST_TYPE,
    v: 1,
    product: r.product,
    channel: r.channel,
    version: r.version,
    released_at: r.released_at,
    staging_percentage: r.staging_percentage ?? 100,
    notes: r.notes ?? null,
    files: r.files,
    issued_at: issuedAt.toISOString(),
  });
}

export async function signManifest(manifest: ReleaseManifest, sign: SignBytes): Promise<SignedManifest> {
  const bytes = Buffer.from(JSON.stringify(ReleaseManifest.parse(manifest)));
  const { sig, kid } = await sign(bytes);
  return SignedManifest.parse({ payload: bytes.toString('base64url'), sig, alg: 'ed25519', kid });
}

export type OpenResult = { ok: true; manifest: ReleaseManifest } | { ok: false; reason: string };

/** Verifies then parses; `keys` is the JWKS's keys, or just the one the client pinned. */
export function openManifest(signed: unknown, keys: readonly VerifyKey[]): OpenResult {
  const env = SignedManifest.safeParse(signed);
  if (!env.success) return { ok: false, reason: 'not a signed manifest' };
  const key = keys.find((k) => k.kid === env.data.kid);
  if (!key) return { ok: false, reason: `signed with key ${env.data.kid}, which is not one we trust` };
  const bytes = Buffer.from(env.data.payload, 'base64url');
  const sig = Buffer.from(env.data.sig, 'base64url');
  let good: boolean;
  try {
    good =
      sig.length === 64 &&
      verify(null, bytes, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.x }, format: 'jwk' }), sig);
  } catch {
    good = false;
  }
  if (!good) return { ok: false, reason: 'the manifest signature does not verify' };
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, reason: 'the signed payload is not JSON' };
  }
  const m = ReleaseManifest.safeParse(json);
  return m.success
    ? { ok: true, manifest: m.data }
    : { ok: false, reason: 'the signed payload is not a release manifest' };
}

export type FileCheck = { ok: true; file: ReleaseFile } | { ok: false; reason: string };

/** Does this file (by name, with this digest) belong to the release the manifest describes? */
export function checkReleaseFile(manifest: ReleaseManifest, name: string, actual: FileDigest): FileCheck {
  const file = manifest.files.find((f) => f.name === name);
  if (!file)
    return {
      ok: false,
      reason: `${manifest.product} ${manifest.version} has no file named ${JSON.stringify(name.slice(0, 200))}`,
    };
  if (file.size !== actual.size)
    return { ok: false, reason: `${file.name} should be ${file.size} bytes, this one is ${actual.size}` };
  if (!sameSha512(file.sha512, actual.sha512))
    return { ok: false, reason: `${file.name} does not match the sha512 in the signed manifest` };
  return { ok: true, file };
}
