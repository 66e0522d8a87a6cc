import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpdatesView } from '../../main/contract/cloud-actions.ts';
import { VERSION } from '../../main/version.ts';
import { startWireWorld, type WireWorld } from './helpers/wire-world.ts';

/**
 * updates.status / updates.check through the service against the reference
 * gateway's updates/check: an update is offered only once its signed
 * manifest verified against the pinned key; unconnected, no request at all.
 */
let w: WireWorld;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-wire-rel-'));
  w = await startWireWorld({ harness: { releasesDir: join(dir, 'store') } });
  await writeFile(join(dir, 'Gatehouse-9.9.0.AppImage'), Buffer.alloc(4096, 7));
  await w.h.op('releases.publish', {
    product: 'mcp',
    channel: 'stable',
    version: '9.9.0',
    notes: 'Newer.',
    files: [join(dir, 'Gatehouse-9.9.0.AppImage')],
  });
}, 120_000);
afterAll(async () => {
  await w?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('updates through the service', () => {
  it('unconnected: status and check answer without a request, saying how to connect', async () => {
    const before = w.proxy.count();
    const s = UpdatesView.parse((await w.admin('GET', 'updates/status')).body.data);
    expect(s).toMatchObject({ connected: false, current_version: VERSION, update_available: false, checked_at: null });
    const c = UpdatesView.parse((await w.admin('POST', 'updates/check', {})).body.data);
    expect(c.error?.code).toBe('invalid_site');
    expect(c.update_available).toBe(false);
    expect(w.proxy.count()).toBe(before);
  });

  it('connected with a pro license: the newer release is offered after its manifest verified', async () => {
    await w.admin('POST', 'cloud/connect', { url: w.proxy.url });
    const lic = await w.h.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
    await w.admin('POST', 'cloud/activate', { license_key: lic.license_key });
    const c = UpdatesView.parse((await w.admin('POST', 'updates/check', {})).body.data);
    expect(c).toMatchObject({
      connected: true,
      eligible: true,
      update_available: true,
      latest_version: '9.9.0',
      refused: null,
      error: null,
    });
    expect(c.release).toMatchObject({
      version: '9.9.0',
      channel: 'stable',
      notes: 'Newer.',
      files: [{ name: 'Gatehouse-9.9.0.AppImage', size: 4096 }],
    });
    // status answers the last check without asking again
    const before = w.proxy.count();
    expect(UpdatesView.parse((await w.admin('GET', 'updates/status')).body.data).latest_version).toBe('9.9.0');
    expect(w.proxy.count()).toBe(before);
  });
});
