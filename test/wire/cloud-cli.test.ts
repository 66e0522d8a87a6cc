import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudStatusView } from '../../main/contract/cloud-actions.ts';
import { startGateway, type Gateway } from '../cloud-client/helpers/world.ts';
import {
  collect,
  filesContaining,
  removeDir,
  runCliHere,
  spawnCli,
  startServe,
  tempDataDir,
  type Served,
} from '../cli/cli-harness.ts';

/**
 * `gatehouse cloud ...` against the real reference gateway, through a running
 * service and directly on the data dir: the whole connect flow, with the
 * license key given on stdin (out of the shell's history) and found in no
 * output, no error and no file of the data dir (it lives in the OS keychain).
 */
let gw: Gateway;
const dirs: string[] = [];
let served: Served | null = null;

beforeAll(async () => {
  gw = await startGateway();
}, 120_000);
afterAll(async () => {
  await served?.stop('SIGKILL');
  for (const d of dirs) await removeDir(d);
  await gw?.stop();
});

const vaultArgs = ['--vault', 'keychain'];
const args = (dir: string) => ['--data-dir', dir, ...vaultArgs];

// A command run in this process (cli-harness.ts, runCliHere), or as a child process when it reads the key on stdin.
async function cloud<T = unknown>(dir: string, sub: string[], stdin?: string): Promise<T> {
  const argv = ['cloud', ...sub, ...args(dir), '--json'];
  let r: Awaited<ReturnType<typeof collect>>;
  if (stdin === undefined) r = await runCliHere(argv);
  else {
    const child = spawnCli(argv);
    child.stdin.end(stdin);
    r = await collect(child);
  }
  if (r.code !== 0)
    throw new Error(`gatehouse cloud ${sub.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

async function flow(dir: string, mode: 'service' | 'direct'): Promise<{ siteId: string; key: string }> {
  const before = await cloud<CloudStatusView>(dir, ['status']);
  expect(before.connected).toBe(false);
  const c = await cloud<{ site_id: string; first_sync: { ok: boolean }; pinned_key: { fingerprint: string } }>(dir, [
    'connect',
    '--url',
    gw.url,
    '--environment',
    'staging',
  ]);
  expect(c.first_sync).toEqual({ ok: true });
  const lic = await gw.license('pro');
  const a = await cloud<{ license: { status: string; plan: string; key_preview: string } }>(
    dir,
    ['activate', '-'],
    `${lic.license_key}\n`,
  );
  expect(a.license).toMatchObject({ status: 'active', plan: 'pro' });
  const s = await cloud<CloudStatusView>(dir, ['status']);
  expect(s).toMatchObject({
    connected: true,
    site_id: c.site_id,
    environment: 'staging',
    certificate: { usable: true, license: { plan: 'pro' } },
  });
  const human = await runCliHere(['cloud', 'status', ...args(dir)]);
  expect(human.code).toBe(0);
  expect(human.stdout).toContain(`as site ${c.site_id}`);
  expect(human.stdout).toContain('plan pro');
  const sync = await cloud<{ certificate: string; outbox: { ok: boolean } }>(dir, ['sync']);
  expect(sync).toMatchObject({ certificate: 'accepted', outbox: { ok: true } });
  const d = await cloud<{ license: { status: string } }>(dir, ['deactivate']);
  expect(d.license.status).not.toBe('active');
  // the key is in the keychain only: no file of the data dir holds it
  expect(await filesContaining(dir, lic.license_key), mode).toEqual([]);
  const off = await cloud<{ site_id: string; remote: { ok: boolean } }>(dir, ['disconnect']);
  expect(off).toMatchObject({ site_id: c.site_id, remote: { ok: true } });
  expect((await cloud<CloudStatusView>(dir, ['status'])).connected).toBe(false);
  return { siteId: c.site_id, key: lic.license_key };
}

describe('gatehouse cloud', () => {
  it('the whole flow through the running service', async () => {
    const dir = await tempDataDir();
    dirs.push(dir);
    served = await startServe(dir, [], {}, vaultArgs);
    // The data dir is locked by the service: each command went through its admin API.
    const { key } = await flow(dir, 'service');
    // nor in the service's log, nor in its audit (the audit files are in the data dir, checked in flow())
    expect(served.stderr()).not.toContain(key);
    await served.stop('SIGTERM');
    served = null;
  });

  it('the whole flow on the data dir when no service runs', async () => {
    const dir = await tempDataDir();
    dirs.push(dir);
    await flow(dir, 'direct');
  });

  it('bad usage and bad keys: exit 2 or a clear error that never repeats the key', async () => {
    const dir = await tempDataDir();
    dirs.push(dir);
    const noUrl = await runCliHere(['cloud', 'connect', ...args(dir)]);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('--url');
    const env = await runCliHere(['cloud', 'connect', '--url', gw.url, '--environment', 'moon', ...args(dir)]);
    expect(env.code).toBe(2);
    const bad = 'ghl_not-a-real-key-but-secretish';
    const r = await runCliHere(['cloud', 'activate', bad, ...args(dir), '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr.trim().split('\n').pop()!)).toMatchObject({ ok: false, code: 'invalid_value' });
    expect(r.stderr + r.stdout).not.toContain(bad);
    // a well-formed key while not connected: says how to connect
    const key = `ghl_${'b'.repeat(32)}`;
    const nc = await runCliHere(['cloud', 'activate', key, ...args(dir)]);
    expect(nc.code).toBe(1);
    expect(nc.stderr).toContain('gatehouse cloud connect');
    expect(nc.stderr + nc.stdout).not.toContain(key);
    expect(await filesContaining(dir, key)).toEqual([]);
  });
});
