import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UpdatesView } from '../../main/contract/cloud-actions.ts';
import { VERSION } from '../../main/version.ts';
import { releaseOf } from '../../cloud/repo/releases-repo.ts';
import { startWireWorld, type WireWorld } from './helpers/wire-world.ts';

/**
 * updates.check through the service against the reference gateway, with a
 * man in the middle who replays real manifests the gateway signed (they are
 * in earlier answers, and every product's are signed with the same key): one
 * for another product, an older release (a downgrade) and the running
 * version itself, each put in the updates/check answer with
 * `update_available: true`. The signature verifies every time; none of them
 * is an update of this app.
 */
let w: WireWorld;
let dir: string;

const signed = async (product: string, version: string, channel = 'stable') =>
  (await releaseOf(w.h.svc.ctx.db, product, channel, version))!.signed;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-wire-replay-'));
  w = await startWireWorld({ harness: { releasesDir: join(dir, 'store') } });
  for (const [product, version] of [
    ['mcp', '0.0.1'],
    ['mcp', VERSION],
    ['code', '9.9.1'],
    ['mcp', '9.9.0'],
  ] as const) {
    const file = join(dir, `${product}-${version}.AppImage`);
    await writeFile(file, Buffer.alloc(2048, version.length));
    await w.h.op('releases.publish', {
      product,
      channel: 'stable',
      version,
      notes: `${product} ${version}`,
      files: [file],
    });
  }
  const beta = join(dir, 'mcp-9.9.5-beta.AppImage');
  await writeFile(beta, Buffer.alloc(2048, 7));
  await w.h.op('releases.publish', {
    product: 'mcp',
    channel: 'beta',
    version: '9.9.5',
    notes: 'mcp 9.9.5 beta',
    files: [beta],
  });
  await w.admin('POST', 'cloud/connect', { url: w.proxy.url });
  const lic = await w.h.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
  await w.admin('POST', 'cloud/activate', { license_key: lic.license_key });
}, 120_000);
afterEach(() => w.proxy.reset());
afterAll(async () => {
  await w?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** updates/check answered with `manifest` (a real signed one) and update_available: true. */
async function checkWith(manifest: unknown): Promise<UpdatesView> {
  w.proxy.rule((r) =>
    r.path.endsWith('/updates/check')
      ? { kind: 'rewrite', change: (a) => ({ ...(a as object), update_available: true, manifest }) }
      : undefined,
  );
  const res = await w.admin('POST', 'updates/check', {});
  expect(w.proxy.seen.filter((s) => s.path.endsWith('/updates/check') && s.fault === 'rewrite')).toHaveLength(1);
  return UpdatesView.parse(res.body.data);
}

describe('a replayed signed manifest is not offered as an update', () => {
  it('the real answer: 9.9.0 of mcp is offered', async () => {
    const v = UpdatesView.parse((await w.admin('POST', 'updates/check', {})).body.data);
    expect(v).toMatchObject({ update_available: true, latest_version: '9.9.0', refused: null, error: null });
  });

  it("another product's manifest (signed by the same key): refused, nothing offered", async () => {
    const v = await checkWith(await signed('code', '9.9.1'));
    expect(v.update_available).toBe(false);
    expect(v.release).toBeNull();
    expect(v.latest_version).toBeNull();
    expect(v.refused).toMatch(/for the product 'code', not 'mcp'/);
  });

  it('an older release (a downgrade): refused, nothing offered', async () => {
    const v = await checkWith(await signed('mcp', '0.0.1'));
    expect(v.update_available).toBe(false);
    expect(v.refused).toMatch(
      new RegExp(`version 0\\.0\\.1, which is not newer than the running ${VERSION.replace(/\./g, '\\.')}`),
    );
  });

  it('the running version itself: not an update', async () => {
    const v = await checkWith(await signed('mcp', VERSION));
    expect(v.update_available).toBe(false);
    expect(v.refused).toMatch(/not newer than the running/);
  });

  it("a newer release of another channel (the answer's own channel is not signed): refused for the certificate's channel", async () => {
    const v = await checkWith(await signed('mcp', '9.9.5', 'beta'));
    expect(v.update_available).toBe(false);
    expect(v.release).toBeNull();
    expect(v.channel).toBe('stable');
    expect(v.refused).toMatch(/for the 'beta' channel, not 'stable'/);
  });

  it('after the replays, the real answer is offered again', async () => {
    const v = UpdatesView.parse((await w.admin('POST', 'updates/check', {})).body.data);
    expect(v).toMatchObject({ update_available: true, latest_version: '9.9.0', refused: null });
  });
});
