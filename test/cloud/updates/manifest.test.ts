import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReleaseManifest } from '../../../main/contract/cloud/updates.ts';
import { SignedManifest, type ReleaseFile } from '../../../main/contract/cloud/updates.ts';
import { hashFile, sameSha512, sha512Base64 } from '../../../cloud/updates/file-hash.ts';
import {
  buildManifest,
  checkReleaseFile,
  openManifest,
  signManifest,
  type SignBytes,
  type VerifyKey,
} from '../../../cloud/updates/manifest.ts';

// Release files hashed as electron-updater expects, manifests signed with an
// injected Ed25519 signer and verified with the JWKS key, tampering refused.

function ed25519(kid: string): { signer: SignBytes; key: VerifyKey } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    signer: (bytes) => ({ sig: sign(null, bytes, privateKey).toString('base64url'), kid }),
    key: { kid, x: publicKey.export({ format: 'jwk' }).x! },
  };
}

let dir: string;
let files: ReleaseFile[];
const gateway = ed25519('ed_current');
const stranger = ed25519('ed_other');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-release-'));
  const bytes = Buffer.alloc(300_000);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) & 0xff;
  await writeFile(join(dir, 'Gatehouse-1.4.0.AppImage'), bytes);
  await writeFile(join(dir, 'Gatehouse-1.4.0-mac.zip'), bytes.subarray(0, 1000));
  files = [
    {
      name: 'Gatehouse-1.4.0.AppImage',
      platform: 'linux',
      arch: 'x64',
      ...(await hashFile(join(dir, 'Gatehouse-1.4.0.AppImage'))),
    },
    {
      name: 'Gatehouse-1.4.0-mac.zip',
      platform: 'mac',
      arch: 'universal',
      ...(await hashFile(join(dir, 'Gatehouse-1.4.0-mac.zip'))),
    },
  ];
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const release = () =>
  buildManifest(
    { product: 'mcp', channel: 'stable', version: '1.4.0', released_at: '2026-03-01T10:00:00.000Z', files },
    new Date('2026-03-01T10:05:00.000Z'),
  );

describe('file hashes', () => {
  it('is base64 SHA-512 of the bytes, streamed from disk the same as in memory', async () => {
    const bytes = Buffer.from('gatehouse');
    await writeFile(join(dir, 'small.bin'), bytes);
    expect(await hashFile(join(dir, 'small.bin'))).toEqual({
      sha512: createHash('sha512').update(bytes).digest('base64'),
      size: 9,
    });
    expect(sha512Base64(bytes)).toHaveLength(88);
    expect(files[0]!.size).toBe(300_000);
  });

  it('compares digests in constant time and refuses anything that is not one', () => {
    const d = sha512Base64(Buffer.from('a'));
    expect(sameSha512(d, d)).toBe(true);
    expect(sameSha512(d, sha512Base64(Buffer.from('b')))).toBe(false);
    expect(sameSha512('', '')).toBe(false);
    expect(sameSha512('abc', 'abc')).toBe(false);
  });
});

describe('signed release manifests', () => {
  it('signs the exact payload bytes and opens with the published key', async () => {
    const signed = await signManifest(release(), gateway.signer);
    expect(SignedManifest.parse(signed)).toMatchObject({ alg: 'ed25519', kid: 'ed_current' });
    const opened = openManifest(signed, [stranger.key, gateway.key]);
    expect(opened).toEqual({ ok: true, manifest: release() });
    expect(opened.ok && opened.manifest.staging_percentage).toBe(100);
  });

  it('refuses a payload changed after signing (a swapped hash, a bumped version)', async () => {
    const signed = await signManifest(release(), gateway.signer);
    const payload = JSON.parse(Buffer.from(signed.payload, 'base64url').toString()) as ReleaseManifest;
    for (const change of [
      (m: ReleaseManifest) => void (m.files[0]!.sha512 = sha512Base64(Buffer.from('evil'))),
      (m: ReleaseManifest) => void (m.version = '9.9.9'),
    ]) {
      const m = structuredClone(payload);
      change(m);
      const tampered = { ...signed, payload: Buffer.from(JSON.stringify(m)).toString('base64url') };
      expect(openManifest(tampered, [gateway.key])).toEqual({
        ok: false,
        reason: 'the manifest signature does not verify',
      });
    }
  });

  it('refuses a manifest signed by a key it does not trust, or claiming a trusted kid', async () => {
    expect(openManifest(await signManifest(release(), stranger.signer), [gateway.key])).toMatchObject({
      ok: false,
      reason: expect.stringContaining('not one we trust'),
    });
    const forged = await signManifest(
      release(),
      (b) => ({ ...stranger.signer(b), kid: 'ed_current' }) as { sig: string; kid: string },
    );
    expect(openManifest(forged, [gateway.key])).toEqual({
      ok: false,
      reason: 'the manifest signature does not verify',
    });
  });

  it('refuses envelopes that are not one, without throwing', () => {
    for (const bad of [
      null,
      'x',
      {},
      { payload: 'a', sig: 'b', alg: 'rsa', kid: 'ed_current' },
      { payload: 'a', sig: 'b'.repeat(86), alg: 'ed25519', kid: 'ed_current' },
    ]) {
      expect(openManifest(bad, [gateway.key]).ok).toBe(false);
    }
  });

  it('refuses release input that could become a path, a URL or an unbounded record', () => {
    const base = {
      product: 'mcp',
      channel: 'stable',
      version: '1.4.0',
      released_at: '2026-03-01T10:00:00.000Z',
      files,
    };
    const bad = [
      { ...base, files: [{ ...files[0]!, name: '../../etc/passwd' }] },
      { ...base, files: [{ ...files[0]!, name: 'https://evil.example/x.AppImage' }] },
      { ...base, files: [files[0]!, files[0]!] },
      { ...base, files: [{ ...files[0]!, sha512: 'not-a-digest' }] },
      { ...base, version: 'v1.4' },
      { ...base, channel: 'beta-mac' },
      { ...base, staging_percentage: 101 },
      { ...base, files: [] },
    ];
    for (const r of bad) expect(() => buildManifest(r as never, new Date())).toThrow();
  });
});

describe('checking a release file against the manifest', () => {
  it('accepts the published bytes and refuses a tampered, truncated or unknown file', async () => {
    const m = release();
    const good = await hashFile(join(dir, 'Gatehouse-1.4.0.AppImage'));
    expect(checkReleaseFile(m, 'Gatehouse-1.4.0.AppImage', good)).toMatchObject({ ok: true });
    const tampered = Buffer.alloc(300_000);
    tampered[0] = 1;
    expect(checkReleaseFile(m, 'Gatehouse-1.4.0.AppImage', { sha512: sha512Base64(tampered), size: 300_000 })).toEqual({
      ok: false,
      reason: 'Gatehouse-1.4.0.AppImage does not match the sha512 in the signed manifest',
    });
    expect(checkReleaseFile(m, 'Gatehouse-1.4.0.AppImage', { ...good, size: 10 }).ok).toBe(false);
    expect(checkReleaseFile(m, 'other.exe', good).ok).toBe(false);
  });
});
