import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PRINCIPALS } from '../../main/contract/index.ts';
import type { ReleaseFile } from '../../main/contract/cloud/updates.ts';
import { dispatchAs } from '../../main/core/admin/invoke.ts';
import { DesktopUpdater } from '../../main/updates/desktop-updater.ts';
import type { UpdaterDeps } from '../../main/updates/desktop-updater.ts';
import { releaseOf } from '../../cloud/repo/releases-repo.ts';
import { cloudPackageSource, pickFile, releaseTarget } from '../../main/updates/release-source.ts';
import type { PackageClient } from '../../main/updates/release-source.ts';
import { downloadUrlAllowed } from '../../main/updates/verified-download.ts';
import { VERSION } from '../../main/version.ts';
import { startWireWorld, type WireWorld } from '../wire/helpers/wire-world.ts';

/**
 * The desktop updater against the real reference gateway with a published
 * release, through the real service and its cloud client: offered only after
 * the manifest verified and the downloaded bytes hash to what it signed.
 */
const TARGET = { platform: 'linux', arch: 'x64' } as const;
const BYTES = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 251));
const FILE = 'Gatehouse-9.9.0.AppImage';
const OLD_FILE = 'Gatehouse-0.0.1.AppImage';
const OLD_BYTES = Buffer.alloc(5000, 3);
const BETA_FILE = 'Gatehouse-9.9.0-beta.AppImage';

let w: WireWorld;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'gh-desktop-updater-'));
  w = await startWireWorld({ harness: { releasesDir: join(work, 'store') } });
  await writeFile(join(work, FILE), BYTES);
  await w.h.op('releases.publish', {
    product: 'mcp',
    channel: 'stable',
    version: '9.9.0',
    notes: 'Newer.',
    files: [join(work, FILE)],
  });
  // Signed by the same gateway key, but not an update of this app: another product, and an older release of it.
  await w.h.op('releases.publish', {
    product: 'code',
    channel: 'stable',
    version: '9.9.0',
    notes: 'Another product.',
    files: [join(work, FILE)],
  });
  await writeFile(join(work, OLD_FILE), OLD_BYTES);
  await w.h.op('releases.publish', {
    product: 'mcp',
    channel: 'stable',
    version: '0.0.1',
    notes: 'Older.',
    files: [join(work, OLD_FILE)],
  });
  // The same version on another channel, with other bytes: a genuine release, but not the one the check offered.
  await writeFile(join(work, BETA_FILE), Buffer.alloc(3000, 9));
  await w.h.op('releases.publish', {
    product: 'mcp',
    channel: 'beta',
    version: '9.9.0',
    notes: 'Beta.',
    files: [join(work, BETA_FILE)],
  });
}, 120_000);
afterAll(async () => {
  await w?.stop();
  await rm(work, { recursive: true, force: true });
});

let n = 0;
function updater(o: { fetch?: typeof fetch; client?: PackageClient; check?: UpdaterDeps['check'] } = {}) {
  const dir = join(work, `updates-${++n}`);
  const dispatch = dispatchAs(w.svc.core.invoke, PRINCIPALS.tray);
  const states: string[] = [];
  const u = new DesktopUpdater({
    check: o.check ?? (() => dispatch('updates.check', {})),
    package: cloudPackageSource(o.client ?? w.svc.core.cloud, { version: VERSION, ...TARGET }),
    target: TARGET,
    dir,
    ...(o.fetch ? { fetch: o.fetch } : {}),
    onChange: (s) => states.push(s.phase),
  });
  return { u, dir, states };
}

/** A fetch that changes the bytes on the way (a compromised mirror or a man in the middle). */
const altering =
  (change: (b: Buffer) => Buffer): typeof fetch =>
  async (input, init) => {
    const res = await fetch(input, init);
    return new Response(new Uint8Array(change(Buffer.from(await res.arrayBuffer()))), { status: res.status });
  };

describe('desktop updater', () => {
  it('unconnected: no offer, and it says why', async () => {
    const { u } = updater();
    const s = await u.check();
    expect(s).toMatchObject({ phase: 'failed' });
    expect(s.phase === 'failed' && s.reason).toMatch(/not connected to a cloud gateway.*\(invalid_site\)/);
    expect((await u.install(vi.fn())).ok).toBe(false);
  });

  it('connected: downloads the offered release, verifies it, and offers it; installs only when asked', async () => {
    await w.admin('POST', 'cloud/connect', { url: w.proxy.url });
    const lic = await w.h.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
    await w.admin('POST', 'cloud/activate', { license_key: lic.license_key });

    const { u, dir, states } = updater();
    const s = await u.check();
    expect(states).toEqual(['checking', 'downloading', 'ready']);
    expect(s).toMatchObject({
      phase: 'ready',
      version: '9.9.0',
      notes: 'Newer.',
      file: { name: FILE, size: BYTES.length, sha512: createHash('sha512').update(BYTES).digest('base64') },
    });
    const path = s.phase === 'ready' ? s.path : '';
    expect(path).toBe(join(dir, FILE));
    expect((await readFile(path)).equals(BYTES)).toBe(true);
    expect(await readdir(dir)).toEqual([FILE]);
    // a second check finds the same version ready: nothing downloaded again
    await u.check();
    expect(states.slice(3)).toEqual(['checking', 'ready']);

    const open = vi.fn(async () => {});
    expect(await u.install(open)).toEqual({ ok: true });
    expect(open).toHaveBeenCalledWith(path);
  });

  it('refuses a download whose bytes are not the ones the manifest signed, keeping nothing', async () => {
    const tampered = updater({
      fetch: altering((b) => Buffer.concat([b.subarray(0, 100), Buffer.from([b[100]! ^ 1]), b.subarray(101)])),
    });
    const s = await tampered.u.check();
    expect(s).toEqual({
      phase: 'failed',
      reason: 'the downloaded file does not match the SHA-512 the manifest signed',
    });
    expect(await readdir(tampered.dir)).toEqual([]);
    expect((await tampered.u.install(vi.fn())).ok).toBe(false);

    const longer = updater({ fetch: altering((b) => Buffer.concat([b, Buffer.from('more')])) });
    expect(await longer.u.check()).toEqual({
      phase: 'failed',
      reason: `the download is larger than the ${BYTES.length} bytes the manifest signed`,
    });
    const shorter = updater({ fetch: altering((b) => b.subarray(0, 1000)) });
    expect(await shorter.u.check()).toEqual({
      phase: 'failed',
      reason: `the download has 1000 bytes, the manifest signed ${BYTES.length}`,
    });
  });

  it('refuses a package whose manifest does not verify against the pinned key', async () => {
    const real = w.svc.core.cloud;
    const forged: PackageClient = {
      get api() {
        return {
          updatesPackage: async (q: Parameters<NonNullable<PackageClient['api']>['updatesPackage']>[0]) => {
            const ans = await real.api!.updatesPackage(q);
            const payload = JSON.parse(Buffer.from(ans.data.manifest.payload, 'base64url').toString());
            payload.files[0].sha512 = createHash('sha512').update('evil').digest('base64');
            return {
              data: {
                ...ans.data,
                manifest: { ...ans.data.manifest, payload: Buffer.from(JSON.stringify(payload)).toString('base64url') },
              },
            };
          },
        };
      },
      openManifest: (m) => real.openManifest(m),
    };
    const { u, dir } = updater({ client: forged });
    const s = await u.check();
    expect(s.phase === 'failed' && s.reason).toMatch(
      /^the release manifest did not verify against the pinned gateway key/,
    );
    expect(await readdir(dir).catch(() => [])).toEqual([]);
  });

  /** The real cloud client, with the updates/package answer's manifest (and links) swapped for another real signed one. */
  const replaying = (product: string, version: string, file: string, channel = 'stable'): PackageClient => {
    const real = w.svc.core.cloud;
    return {
      get api() {
        return {
          updatesPackage: async (q: Parameters<NonNullable<PackageClient['api']>['updatesPackage']>[0]) => {
            const ans = await real.api!.updatesPackage(q);
            const manifest = (await releaseOf(w.h.svc.ctx.db, product, channel, version))!.signed;
            const files = ans.data.files.map((f) => ({
              ...f,
              name: file,
              url: f.url.replace(/[^/]+$/, encodeURIComponent(file)),
            }));
            return { data: { ...ans.data, version, manifest, files } };
          },
        };
      },
      openManifest: (m) => real.openManifest(m),
    };
  };

  it("refuses a package whose signed manifest is another product's, downloading nothing", async () => {
    const { u, dir } = updater({ client: replaying('code', '9.9.0', FILE) });
    const s = await u.check();
    expect(s).toEqual({
      phase: 'failed',
      reason: "the package's signed manifest is for the product 'code', not 'mcp'; nothing was downloaded",
    });
    expect(await readdir(dir).catch(() => [])).toEqual([]);
    expect((await u.install(vi.fn())).ok).toBe(false);
  });

  it('refuses a package of the offered version from another channel (its signed manifest says so), downloading nothing', async () => {
    const { u, dir } = updater({ client: replaying('mcp', '9.9.0', BETA_FILE, 'beta') });
    const s = await u.check();
    expect(s).toEqual({
      phase: 'failed',
      reason: "the package is from the 'beta' channel, the check offered 'stable'; nothing was downloaded",
    });
    expect(await readdir(dir).catch(() => [])).toEqual([]);
  });

  it('refuses an older release even when the check (the service) offers it: no downgrade', async () => {
    const dispatch = dispatchAs(w.svc.core.invoke, PRINCIPALS.tray);
    // a service that said yes to a replayed 0.0.1 (the updater does not rely on the service's own check)
    const check: UpdaterDeps['check'] = async () => {
      const r = await dispatch('updates.check', {});
      return r.ok ? { ...r, data: { ...r.data, update_available: true, latest_version: '0.0.1', refused: null } } : r;
    };
    const { u, dir } = updater({ client: replaying('mcp', '0.0.1', OLD_FILE), check });
    const s = await u.check();
    expect(s).toEqual({
      phase: 'failed',
      reason: `the service offered version 0.0.1, which is not newer than the running ${VERSION}; nothing was downloaded`,
    });
    expect(await readdir(dir).catch(() => [])).toEqual([]);
  });

  it('refuses the running version itself (an equal version is not an update)', async () => {
    const old = new DesktopUpdater({
      check: async () => ({
        ok: true,
        data: {
          connected: true,
          current_version: '0.0.0',
          channel: 'stable',
          eligible: true,
          checked_at: null,
          latest_version: '0.0.1',
          update_available: true,
          release: null,
          refused: null,
          error: null,
        },
      }),
      package: cloudPackageSource(replaying('mcp', '0.0.1', OLD_FILE), { version: VERSION, ...TARGET }),
      target: TARGET,
      currentVersion: '0.0.1',
      dir: join(work, `updates-${++n}`),
    });
    expect(await old.check()).toEqual({
      phase: 'failed',
      reason: 'the service offered version 0.0.1, which is not newer than the running 0.0.1; nothing was downloaded',
    });
  });

  it('downloads nothing when the check names a version but no verified release', async () => {
    const dir = join(work, `updates-${++n}`);
    const u = new DesktopUpdater({
      check: async () => ({
        ok: true,
        data: {
          connected: true,
          current_version: VERSION,
          channel: 'stable',
          eligible: true,
          checked_at: null,
          latest_version: '9.9.0',
          update_available: true,
          release: null,
          refused: null,
          error: null,
        },
      }),
      package: cloudPackageSource(w.svc.core.cloud, { version: VERSION, ...TARGET }),
      target: TARGET,
      dir,
    });
    expect(await u.check()).toEqual({
      phase: 'failed',
      reason: 'the check offered a version without its verified release; nothing was downloaded',
    });
    expect(await readdir(dir).catch(() => [])).toEqual([]);
  });

  it('will not open an installer that changed on disk after it was verified', async () => {
    const { u } = updater();
    const s = await u.check();
    expect(s.phase).toBe('ready');
    await writeFile(
      s.phase === 'ready' ? s.path : '',
      Buffer.concat([BYTES.subarray(0, 10), Buffer.alloc(BYTES.length - 10)]),
    );
    const open = vi.fn(async () => {});
    expect(await u.install(open)).toEqual({
      ok: false,
      reason: 'the downloaded update changed on disk after it was verified',
    });
    expect(open).not.toHaveBeenCalled();
    expect(u.state.phase).toBe('failed');
  });
});

describe('picking the file and the link', () => {
  const f = (name: string, platform: ReleaseFile['platform'], arch: ReleaseFile['arch']): ReleaseFile => ({
    name,
    platform,
    arch,
    size: 1,
    sha512: `${'A'.repeat(86)}==`,
  });
  it('takes this platform and arch (or universal), the usual installer first', () => {
    const files = [
      f('a.deb', 'linux', 'x64'),
      f('a.AppImage', 'linux', 'arm64'),
      f('a.AppImage', 'linux', 'x64'),
      f('a.exe', 'win', 'x64'),
      f('a.zip', 'mac', 'universal'),
      f('a.dmg', 'mac', 'universal'),
    ];
    expect(pickFile(files, { platform: 'linux', arch: 'x64' })?.name).toBe('a.AppImage');
    expect(pickFile(files, { platform: 'linux', arch: 'x64' })?.arch).toBe('x64');
    expect(pickFile(files, { platform: 'mac', arch: 'arm64' })?.name).toBe('a.dmg');
    expect(pickFile(files, { platform: 'win', arch: 'arm64' })).toBeNull();
    expect(releaseTarget('win32', 'x64')).toEqual({ platform: 'win', arch: 'x64' });
    expect(releaseTarget('darwin', 'arm64')).toEqual({ platform: 'mac', arch: 'arm64' });
    expect(releaseTarget('linux', 'arm')).toEqual({ platform: 'linux', arch: 'armv7l' });
    expect(releaseTarget('freebsd', 'x64')).toBeNull();
  });

  it('downloads over https, or http to this machine only, with no credentials in the link', () => {
    expect(downloadUrlAllowed('https://gw.example.com/gateway/v1/updates/files/t/a.exe')).toBe(true);
    expect(downloadUrlAllowed('http://127.0.0.1:8787/x')).toBe(true);
    expect(downloadUrlAllowed('http://gw.example.com/x')).toBe(false);
    expect(downloadUrlAllowed('https://user:pw@gw.example.com/x')).toBe(false);
    expect(downloadUrlAllowed('file:///etc/passwd')).toBe(false);
    expect(downloadUrlAllowed('not a url')).toBe(false);
  });
});
