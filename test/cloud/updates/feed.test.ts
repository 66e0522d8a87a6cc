import http from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CancellationToken } from 'builder-util-runtime';
import { parseUpdateInfo, resolveFiles } from 'electron-updater/out/providers/Provider.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ReleaseFile, ReleaseManifest } from '../../../main/contract/cloud/updates.ts';
import {
  buildUpdateInfo,
  feedFileName,
  feedYaml,
  parseFeedFileName,
  type FeedTarget,
} from '../../../cloud/updates/feed.ts';
import { sha512Base64 } from '../../../cloud/updates/file-hash.ts';
import { buildManifest } from '../../../cloud/updates/manifest.ts';
import { NodeExecutor, testUpdater } from '../helpers/electron-updater.ts';

// The electron-updater "generic" feed, checked by electron-updater itself:
// its own YAML parser and file resolver, then its real updater (the one the
// desktop app runs) asking a local HTTP server for the channel file, applying
// the version and staged-rollout rules, and verifying a download's sha512.

const bytesOf = (seed: number, n: number): Buffer =>
  Buffer.from(Array.from({ length: n }, (_, i) => (i * seed + 11) & 0xff));
const BLOBS: Record<string, Buffer> = {
  'Gatehouse-1.4.0.AppImage': bytesOf(3, 40_000),
  'Gatehouse-1.4.0-arm64.AppImage': bytesOf(5, 30_000),
  'Gatehouse-1.4.0-mac.zip': bytesOf(7, 20_000),
  'Gatehouse-1.4.0-arm64-mac.zip': bytesOf(9, 20_000),
  'Gatehouse Setup 1.4.0.exe': bytesOf(13, 10_000),
};
const PLATFORM: Record<string, Pick<ReleaseFile, 'platform' | 'arch'>> = {
  'Gatehouse-1.4.0.AppImage': { platform: 'linux', arch: 'x64' },
  'Gatehouse-1.4.0-arm64.AppImage': { platform: 'linux', arch: 'arm64' },
  'Gatehouse-1.4.0-mac.zip': { platform: 'mac', arch: 'x64' },
  'Gatehouse-1.4.0-arm64-mac.zip': { platform: 'mac', arch: 'arm64' },
  'Gatehouse Setup 1.4.0.exe': { platform: 'win', arch: 'x64' },
};
// File names with spaces are not allowed in our manifests; electron-builder's own Windows name is rewritten.
const fileName = (n: string): string => n.replace(/ /g, '-');

function manifest(staging = 100): ReleaseManifest {
  const files = Object.entries(BLOBS).map(([n, b]) => ({
    name: fileName(n),
    ...PLATFORM[n]!,
    size: b.length,
    sha512: sha512Base64(b),
  }));
  return buildManifest(
    {
      product: 'mcp',
      channel: 'stable',
      version: '1.4.0',
      released_at: '2026-03-01T10:00:00.000Z',
      staging_percentage: staging,
      notes: 'Faster approvals.\nFixes: "quotes" and: colons',
      files,
    },
    new Date('2026-03-01T10:05:00.000Z'),
  );
}

/** The feed as the gateway's update routes serve it: channel files built from the manifest, release files by name. */
let current = manifest();
let tamper = false;
const asked: string[] = [];
let server: http.Server;
let base = '';
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-feed-'));
  server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/feed\//, ''));
    asked.push(name);
    const target = parseFeedFileName(name);
    const info = target && buildUpdateInfo(current, target);
    if (info) {
      res.writeHead(200, { 'content-type': 'text/yaml' });
      return res.end(feedYaml(info));
    }
    const blob = Object.entries(BLOBS).find(([n]) => fileName(n) === name)?.[1];
    if (!blob) {
      res.writeHead(404);
      return res.end();
    }
    const body = tamper ? Buffer.concat([blob.subarray(0, -1), Buffer.from([blob.at(-1)! ^ 1])]) : blob;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed/`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  current = manifest();
  tamper = false;
  asked.length = 0;
  delete process.env.TEST_UPDATER_ARCH;
});

const targets: Array<[FeedTarget, string, string[]]> = [
  [{ channel: 'stable', platform: 'linux', arch: 'x64' }, 'latest-linux.yml', ['Gatehouse-1.4.0.AppImage']],
  [
    { channel: 'stable', platform: 'linux', arch: 'arm64' },
    'latest-linux-arm64.yml',
    ['Gatehouse-1.4.0-arm64.AppImage'],
  ],
  [
    { channel: 'stable', platform: 'mac', arch: 'universal' },
    'latest-mac.yml',
    ['Gatehouse-1.4.0-mac.zip', 'Gatehouse-1.4.0-arm64-mac.zip'],
  ],
  [{ channel: 'stable', platform: 'win', arch: 'x64' }, 'latest.yml', ['Gatehouse-Setup-1.4.0.exe']],
  [{ channel: 'beta', platform: 'mac', arch: 'universal' }, 'beta-mac.yml', []],
];

describe('feed file names', () => {
  it.each(targets)('%j is %s, and back', (t, name) => {
    expect(feedFileName(t)).toBe(name);
    expect(parseFeedFileName(name)).toEqual(t);
  });

  it('is null for anything else', () => {
    for (const n of [
      'latest.yaml',
      '../latest.yml',
      'latest-linux-sparc.yml',
      'Latest.yml',
      'latest-win.yml',
      '.yml',
      'latest.yml/x',
    ])
      expect(parseFeedFileName(n)).toBeNull();
  });
});

describe("electron-updater's own parser", () => {
  it.each(targets.slice(0, 4))('accepts %j (%s) and resolves its files with their sha512', (t, name, names) => {
    const yaml = feedYaml(buildUpdateInfo(current, t)!);
    const info = parseUpdateInfo(yaml, name, new URL(name, base));
    expect(info).toMatchObject({
      version: '1.4.0',
      releaseDate: '2026-03-01T10:00:00.000Z',
      stagingPercentage: 100,
      releaseNotes: 'Faster approvals.\nFixes: "quotes" and: colons',
    });
    expect(info.path).toBe(names[0]);
    const resolved = resolveFiles(info, new URL(base));
    expect(resolved.map((f) => f.url.href)).toEqual(names.map((n) => new URL(n, base).href));
    for (const f of resolved)
      expect(f.info.sha512).toBe(sha512Base64(Object.entries(BLOBS).find(([n]) => fileName(n) === f.info.url)![1]));
    expect(info.sha512).toBe(resolved[0]!.info.sha512);
  });

  it('has no feed for a platform the release has no file for', () => {
    expect(buildUpdateInfo(current, { channel: 'stable', platform: 'linux', arch: 'armv7l' })).toBeNull();
  });
});

const updater = (platform: NodeJS.Platform) => testUpdater(dir, platform, base);

describe("electron-updater's updater against the feed over HTTP", () => {
  it.each([
    ['linux', undefined, 'latest-linux.yml'],
    ['linux', 'arm64', 'latest-linux-arm64.yml'],
    ['darwin', undefined, 'latest-mac.yml'],
    ['win32', undefined, 'latest.yml'],
  ] as const)('on %s (%s) asks for %s and finds 1.4.0', async (platform, arch, file) => {
    if (arch) process.env.TEST_UPDATER_ARCH = arch;
    const result = await (await updater(platform)).checkForUpdates();
    expect(asked).toEqual([file]);
    expect(result?.isUpdateAvailable).toBe(true);
    expect(result?.updateInfo.version).toBe('1.4.0');
  });

  it('holds the release back from a site outside the staged rollout, and offers it once the rollout covers it', async () => {
    current = manifest(40);
    expect((await (await updater('linux')).checkForUpdates())?.isUpdateAvailable).toBe(false);
    current = manifest(60);
    expect((await (await updater('linux')).checkForUpdates())?.isUpdateAvailable).toBe(true);
  });

  it('downloads a file that matches its sha512, and refuses one that was tampered with on the way', async () => {
    const result = await (await updater('linux')).checkForUpdates();
    const file = result!.updateInfo.files[0]!;
    const url = new URL(file.url, base);
    const executor = new NodeExecutor();
    const dest = join(dir, 'download.AppImage');
    await executor.download(url, dest, { sha512: file.sha512, cancellationToken: new CancellationToken() });
    expect((await readFile(dest)).equals(BLOBS['Gatehouse-1.4.0.AppImage']!)).toBe(true);
    tamper = true;
    await expect(
      executor.download(url, join(dir, 'tampered.AppImage'), {
        sha512: file.sha512,
        cancellationToken: new CancellationToken(),
      }),
    ).rejects.toThrow(/sha512 checksum mismatch/);
  });
});
