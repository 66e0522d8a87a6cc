import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CancellationToken } from 'builder-util-runtime';
import { parseUpdateInfo, resolveFiles } from 'electron-updater/out/providers/Provider.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpdatesCheckAnswer, UpdatesPackageAnswer, UpdatesVerifyAnswer } from '../../main/contract/cloud/index.ts';
import { verifyCertificate } from './helpers/certificate.ts';
import { NodeExecutor, testUpdater } from './helpers/electron-updater.ts';
import { rawRequest, register, type SiteClient } from './helpers/client.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';

/**
 * updates/check, updates/package, updates/verify and the electron-updater
 * feed against the real service: releases published by the operator command,
 * manifests verified with the JWKS by the tests' own Ed25519 check, the feed
 * read by electron-updater's own parser and updater, and the license gate.
 */
let h: Harness;
let dir: string;
let site: SiteClient;
let licenseId: string;
const bytes = (seed: number, n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * seed + 7) & 0xff));
const FILES: Record<string, Buffer> = {
  'Gatehouse-1.4.0.AppImage': bytes(3, 50_000),
  'Gatehouse-1.4.0-mac.zip': bytes(5, 30_000),
  'Gatehouse-Setup-1.4.0.exe': bytes(11, 20_000),
};
const sha512 = (b: Buffer) => createHash('sha512').update(b).digest('base64');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-rel-'));
  h = await startHarness({ releasesDir: join(dir, 'store') });
  for (const [n, b] of Object.entries(FILES)) await writeFile(join(dir, n), b);
  await writeFile(join(dir, 'Gatehouse-1.3.0.AppImage'), bytes(2, 1000));
  await h.op('releases.publish', {
    product: 'mcp',
    channel: 'stable',
    version: '1.3.0',
    files: [join(dir, 'Gatehouse-1.3.0.AppImage')],
  });
  await h.op('releases.publish', {
    product: 'mcp',
    channel: 'stable',
    version: '1.4.0',
    notes: 'Faster approvals.',
    files: Object.keys(FILES).map((n) => join(dir, n)),
  });
  site = await register(h.gateway);
  const lic = await h.op<{ license_key: string; id: string }>('licenses.create', { plan: 'pro' });
  licenseId = lic.id;
  expect((await site.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
}, 180_000);
afterAll(async () => {
  await h?.stop();
  await rm(dir, { recursive: true, force: true });
});

const jwks = async () => (await rawRequest(`${h.gateway}/keys`, 'GET', {})).body;

describe('updates/check', () => {
  it('offers the newest release of the channel with its signed manifest and a feed URL', async () => {
    const r = await site.get('updates/check', { query: 'product=mcp&version=1.0.0&platform=linux&arch=x64' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      product: 'mcp',
      channel: 'stable',
      eligible: true,
      update_available: true,
      latest: { version: '1.4.0', staging_percentage: 100, in_rollout: true, notes: 'Faster approvals.' },
    });
    // The app's client reads it with the contract's schema (main/contract/cloud/ai-updates-answers.ts).
    expect(UpdatesCheckAnswer.safeParse(r.body).success).toBe(true);
    const m = verifyCertificate(r.body.manifest, await jwks());
    expect(m).toMatchObject({
      type: 'gatehouse.release-manifest',
      product: 'mcp',
      channel: 'stable',
      version: '1.4.0',
    });
    expect(m.files.find((f: { name: string }) => f.name === 'Gatehouse-1.4.0.AppImage')).toEqual({
      name: 'Gatehouse-1.4.0.AppImage',
      platform: 'linux',
      arch: 'x64',
      size: 50_000,
      sha512: sha512(FILES['Gatehouse-1.4.0.AppImage']!),
    });
    expect(r.body.feed_url).toMatch(/\/gateway\/v1\/updates\/files\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\/$/);
    const same = await site.get('updates/check', { query: 'product=mcp&version=1.4.0' });
    expect(same.body.update_available).toBe(false);
  });

  it('refuses a channel that is not in the plan, and bad queries', async () => {
    const r = await site.get('updates/check', { query: 'product=mcp&version=1.0.0&channel=nightly' });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({
      code: 'update_not_allowed',
      reason: 'channel_not_in_plan',
      channels: ['stable', 'beta'],
    });
    expect((await site.get('updates/check', { query: 'version=v1' })).status).toBe(400);
    expect((await site.get('updates/check', { query: 'version=1.0.0&extra=1' })).status).toBe(400);
  });
});

describe('updates/package and the files', () => {
  it('answers download URLs that work without a signature, and whose bytes match the manifest', async () => {
    const p = await site.get('updates/package', { query: 'product=mcp&version=1.0.0&platform=linux' });
    expect(p.status).toBe(200);
    expect(UpdatesPackageAnswer.safeParse(p.body).success).toBe(true);
    expect(p.body.files).toHaveLength(1);
    const f = p.body.files[0];
    expect(f).toMatchObject({ name: 'Gatehouse-1.4.0.AppImage', size: 50_000, expires_at: expect.any(String) });
    const got = await fetch(f.url);
    expect(got.status).toBe(200);
    const body = Buffer.from(await got.arrayBuffer());
    expect(body.equals(FILES['Gatehouse-1.4.0.AppImage']!)).toBe(true);
    expect(sha512(body)).toBe(f.sha512);
    expect(got.headers.get('gatehouse-plan')).toBe('pro');
  });

  it('refuses a forged, altered or unknown download link', async () => {
    const p = await site.get('updates/package', { query: 'product=mcp&version=1.0.0' });
    const url = new URL(p.body.files[0].url);
    const [, token] = /\/files\/([^/]+)\//.exec(url.pathname)!;
    const [body, mac] = token!.split('.');
    const forged = JSON.parse(Buffer.from(body!, 'base64url').toString());
    forged.c = 'beta';
    const altered = `${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${mac}`;
    for (const t of [altered, `${body}.${'A'.repeat(43)}`, 'nonsense']) {
      const r = await rawRequest(url.href.replace(token!, t), 'GET', {});
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('unauthorized');
    }
    expect((await rawRequest(url.href.replace(/[^/]+$/, 'Nope-1.0.0.AppImage'), 'GET', {})).status).toBe(404);
  });
});

describe('updates/verify', () => {
  it('accepts the published bytes and refuses a tampered file', async () => {
    const good = FILES['Gatehouse-1.4.0.AppImage']!;
    const ok = await site.post('updates/verify', {
      product: 'mcp',
      version: '1.4.0',
      name: 'Gatehouse-1.4.0.AppImage',
      sha512: sha512(good),
      size: good.length,
    });
    expect(ok.body).toMatchObject({ success: true, valid: true, reason: null });
    expect(UpdatesVerifyAnswer.safeParse(ok.body).success).toBe(true);
    const bad = Buffer.from(good);
    bad[100] = bad[100]! ^ 1;
    const tampered = await site.post('updates/verify', {
      product: 'mcp',
      version: '1.4.0',
      name: 'Gatehouse-1.4.0.AppImage',
      sha512: sha512(bad),
      size: bad.length,
    });
    expect(tampered.body).toMatchObject({
      success: true,
      valid: false,
      reason: expect.stringMatching(/does not match the sha512/),
    });
  });

  it('checks a manifest it is given: its signature first', async () => {
    const { manifest } = (await site.get('updates/check', { query: 'product=mcp&version=1.0.0' })).body;
    const good = FILES['Gatehouse-1.4.0-mac.zip']!;
    const body = {
      product: 'mcp',
      version: '1.4.0',
      name: 'Gatehouse-1.4.0-mac.zip',
      sha512: sha512(good),
      size: good.length,
    };
    expect((await site.post('updates/verify', { ...body, manifest })).body.valid).toBe(true);
    const payload = JSON.parse(Buffer.from(manifest.payload, 'base64url').toString());
    payload.files[1].sha512 = sha512(Buffer.from('evil'));
    const forged = { ...manifest, payload: Buffer.from(JSON.stringify(payload)).toString('base64url') };
    expect((await site.post('updates/verify', { ...body, manifest: forged })).body).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/does not verify/),
    });
  });
});

const updater = (feedUrl: string) => testUpdater(dir, 'linux', feedUrl);

describe('the electron-updater feed', () => {
  it("is read by electron-updater's parser and its updater, which downloads and checks the file", async () => {
    const { feed_url } = (await site.get('updates/check', { query: 'product=mcp&version=1.0.0' })).body;
    const yml = await fetch(`${feed_url}latest-linux.yml?noCache=1`);
    expect(yml.headers.get('content-type')).toMatch(/yaml/);
    const info = parseUpdateInfo(await yml.text(), 'latest-linux.yml', new URL('latest-linux.yml', feed_url));
    expect(info).toMatchObject({ version: '1.4.0', stagingPercentage: 100, releaseNotes: 'Faster approvals.' });
    expect(resolveFiles(info, new URL(feed_url)).map((f) => f.url.href)).toEqual([
      `${feed_url}Gatehouse-1.4.0.AppImage`,
    ]);
    const mac = parseUpdateInfo(
      await (await fetch(`${feed_url}latest-mac.yml`)).text(),
      'latest-mac.yml',
      new URL(feed_url),
    );
    expect(mac.files.map((f) => f.url)).toEqual(['Gatehouse-1.4.0-mac.zip']);

    const result = await (await updater(feed_url)).checkForUpdates();
    expect(result?.isUpdateAvailable).toBe(true);
    const file = result!.updateInfo.files[0]!;
    const dest = join(dir, 'downloaded.AppImage');
    await new NodeExecutor().download(new URL(file.url, feed_url), dest, {
      sha512: file.sha512,
      cancellationToken: new CancellationToken(),
    });
    expect((await readFile(dest)).equals(FILES['Gatehouse-1.4.0.AppImage']!)).toBe(true);
  });

  it('follows a staged rollout: a narrower percentage holds the release back from sites outside it', async () => {
    await h.op('releases.stage', { product: 'mcp', channel: 'stable', version: '1.4.0', percentage: 0 });
    const r = (await site.get('updates/check', { query: 'product=mcp&version=1.0.0' })).body;
    expect(r).toMatchObject({
      update_available: false,
      latest: { version: '1.4.0', staging_percentage: 0, in_rollout: false },
    });
    const yml = await (await fetch(`${r.feed_url}latest-linux.yml`)).text();
    expect(parseUpdateInfo(yml, 'latest-linux.yml', new URL(r.feed_url)).stagingPercentage).toBe(0);
    expect(verifyCertificate(r.manifest, await jwks()).staging_percentage).toBe(0);
    await h.op('releases.stage', { product: 'mcp', channel: 'stable', version: '1.4.0', percentage: 100 });
  });

  it('a published version never changes its bytes', async () => {
    await writeFile(join(dir, 'Gatehouse-1.4.0.AppImage'), bytes(99, 50_000));
    await expect(
      h.op('releases.publish', {
        product: 'mcp',
        channel: 'stable',
        version: '1.4.0',
        files: Object.keys(FILES).map((n) => join(dir, n)),
      }),
    ).rejects.toMatchObject({ code: 'conflict' });
    await writeFile(join(dir, 'Gatehouse-1.4.0.AppImage'), FILES['Gatehouse-1.4.0.AppImage']!);
    const p = await site.get('updates/package', { query: 'product=mcp&version=1.0.0&platform=linux' });
    expect(sha512(Buffer.from(await (await fetch(p.body.files[0].url)).arrayBuffer()))).toBe(
      sha512(FILES['Gatehouse-1.4.0.AppImage']!),
    );
  });

  it('signs every release again when the gateway key rotates', async () => {
    const before = (await site.get('updates/check', { query: 'product=mcp&version=1.0.0' })).body.manifest;
    const rot = await h.op<{ active: string; releases_resigned: number }>('keys.rotate');
    expect(rot.releases_resigned).toBe(2);
    const after = (await site.get('updates/check', { query: 'product=mcp&version=1.0.0' })).body.manifest;
    expect(after.kid).toBe(rot.active);
    expect(after.kid).not.toBe(before.kid);
    expect(after.payload).toBe(before.payload);
    expect(verifyCertificate(after, await jwks()).version).toBe('1.4.0');
  });

  it('is not offered past the license expiry: check, package and the feed URL already handed out all refuse', async () => {
    const { feed_url } = (await site.get('updates/check', { query: 'product=mcp&version=1.0.0' })).body;
    await h.op('licenses.extend', { id: licenseId, expires: new Date(Date.now() - 60_000).toISOString() });
    for (const path of ['updates/check', 'updates/package']) {
      const r = await site.get(path, { query: 'product=mcp&version=1.0.0' });
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: 'update_not_allowed', reason: 'license_expired', retryable: false });
    }
    const feed = await rawRequest(`${feed_url}latest-linux.yml`, 'GET', {});
    expect(feed.status).toBe(403);
    expect(feed.body.error.code).toBe('update_not_allowed');
    expect((await rawRequest(`${feed_url}Gatehouse-1.4.0.AppImage`, 'GET', {})).status).toBe(403);
    await h.op('licenses.extend', { id: licenseId, expires: null });
    expect((await rawRequest(`${feed_url}latest-linux.yml`, 'GET', {})).status).toBe(200);
  });
});
