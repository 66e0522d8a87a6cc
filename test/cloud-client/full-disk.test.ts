import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudStatusView } from '../../main/contract/cloud-actions.ts';
import { HealthReport } from '../../main/contract/health.ts';
import { createLogger } from '../../main/lib/logger.ts';
import { startService } from '../../main/service.ts';
import { connectClient } from '../helpers/service.ts';
import { newClient, startGateway, toolCall, type Gateway } from './helpers/world.ts';

/**
 * The service's data dir on a real tmpfs that fills up, with the real
 * reference gateway: the service stays up (no uncaught ENOSPC from the
 * outbox journal, also while an upload settles), a call whose usage event
 * or audit line cannot be persisted is refused with storage_unavailable and
 * does not run, the health report says the disk is full, and once space is
 * back every acknowledged call's event reaches the gateway.
 */
let gw: Gateway;
let dir: string;
const FILLER = 'filler.bin';

beforeAll(async () => {
  gw = await startGateway();
  dir = await mkdtemp(join(tmpdir(), 'gh-full-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir]);
}, 120_000);
afterAll(async () => {
  if (dir) {
    execFileSync('umount', [dir]);
    await rm(dir, { recursive: true, force: true });
  }
  await gw?.stop();
});

/** Writes until the file system refuses: every block of the tmpfs is taken. */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  }
  try {
    for (;;) writeSync(fd, chunk, 0, 512);
  } catch {
    // the last bytes: full
  } finally {
    closeSync(fd);
  }
}

const ok = <T>(r: { ok: boolean; data?: unknown; code?: string; message?: string }): T => {
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.data as T;
};

describe('a full disk', () => {
  it('refuses metered calls with storage_unavailable and stays up; every acknowledged call is counted at the gateway once space is back', async () => {
    let logs = '';
    const log = createLogger({
      level: 'info',
      stream: new Writable({ write: (c, _e, cb) => ((logs += String(c)), cb()) }),
    });
    const svc = await startService({
      dataDir: dir,
      port: 0,
      vault: 'file',
      enable: true,
      log,
      writeRuntimeFile: false,
      cloud: { tickMs: 3_600_000, outbox: { intervalMs: 3_600_000 }, sleep: async () => {} },
    });
    try {
      const conn = ok<{ site_id: string }>(await svc.dispatch('cloud.connect', { url: gw.url }));
      ok(await svc.dispatch('cloud.activate', { license_key: (await gw.license('pro')).license_key }));
      await svc.core.settings.update({ rate_limit: 0 });
      const { token } = await svc.createToken({ label: 'agent' });
      const client = await connectClient(svc.mcpUrl, token);
      const call = async () =>
        (await client.callTool({ name: 'pages_list', arguments: {} })) as {
          isError?: boolean;
          _meta?: { 'gatehouse/error'?: { code: string } };
        };
      let acked = 0;
      for (let i = 0; i < 5; i++) if (!(await call()).isError) acked++;
      expect(acked).toBe(5);

      fillDisk(join(dir, FILLER));
      // the calls go on until a write fails (a file's last block may take a few more lines), then they are refused
      const refusals: string[] = [];
      for (let i = 0; i < 200 && refusals.length < 3; i++) {
        const r = await call();
        if (!r.isError) acked++;
        else refusals.push(r._meta?.['gatehouse/error']?.code ?? 'none');
      }
      expect(refusals).toEqual(['storage_unavailable', 'storage_unavailable', 'storage_unavailable']);
      // an upload settling on the full disk (the gateway's answers held in memory), then the sync's state that cannot be saved: a clear answer, no crash
      const sync = await svc.dispatch('cloud.sync', {});
      expect(sync).toMatchObject({ ok: false, code: 'storage_unavailable' });
      const held = CloudStatusView.parse(ok(await svc.dispatch('cloud.status', {}))).outbox;
      expect(held).toMatchObject({ depth: 0, delivered: acked });
      const health = HealthReport.parse(ok(await svc.dispatch('health.get', {})));
      expect(health.warnings.map((w) => w.code)).toContain('storage_full');

      await unlink(join(dir, FILLER));
      // space is back: the next call goes through, and the events held in memory reach the gateway
      expect((await call()).isError).toBeFalsy();
      acked++;
      const after = ok<{ outbox: { ok: boolean; remaining: number } }>(await svc.dispatch('cloud.sync', {}));
      expect(after.outbox).toMatchObject({ ok: true, remaining: 0 });
      expect(await gw.storedEvents(conn.site_id)).toBe(acked);
      const st = CloudStatusView.parse(ok(await svc.dispatch('cloud.status', {})));
      expect(st.outbox.depth).toBe(0);
      const healed = HealthReport.parse(ok(await svc.dispatch('health.get', {})));
      expect(healed.warnings.map((w) => w.code)).not.toContain('storage_full');
      await client.close();
    } finally {
      await svc.stop().catch(() => undefined);
    }
    console.log(
      `[full disk] log lines mentioning ENOSPC: ${logs.split('\n').filter((l) => l.includes('ENOSPC')).length}`,
    );
  });

  it('the outbox file refusing writes: events held in memory and uploaded (the settle on the full disk throws nothing), written once space is back', async () => {
    const sub = join(dir, 'client');
    const t = await newClient({ vaultBackend: 'file', dataDir: sub });
    try {
      const { site_id } = await t.client.connect({ url: gw.url });
      await t.client.activate((await gw.license('pro')).license_key);
      fillDisk(join(dir, FILLER));
      const made = 60; // more than the journal's last block can take
      for (let i = 0; i < made; i++) t.client.usage.record(toolCall());
      expect(t.client.usage.view()).toMatchObject({ depth: made, write_error: 'ENOSPC' });
      expect(t.client.usage.view().unsaved).toBeGreaterThan(0);
      expect(t.client.usage.storage.fault()).toMatchObject({ part: 'usage outbox', error: 'ENOSPC' });
      const r = await t.client.usage.flush('interactive');
      expect(r).toMatchObject({ ok: true, sent: made, remaining: 0 });
      expect(await gw.storedEvents(site_id)).toBe(made);
      expect(await t.client.usage.storage.probe()).toMatchObject({ error: 'ENOSPC' });

      await unlink(join(dir, FILLER));
      expect(await t.client.usage.storage.probe()).toBeNull();
      expect(t.client.usage.view()).toMatchObject({ unsaved: 0, write_error: null, delivered: made });
      // what was held is in the file now: a restart finds nothing left to send and the same totals
      const c = await t.reopen();
      expect(c.usage.view()).toMatchObject({ depth: 0, delivered: made });
    } finally {
      await t.client.close().catch(() => undefined);
      await unlink(join(dir, FILLER)).catch(() => undefined);
    }
  });
});
