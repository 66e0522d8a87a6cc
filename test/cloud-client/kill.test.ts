import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../fixtures/fault-proxy.ts';
import { startCloudChild, type CloudChild } from './helpers/cloud-child.ts';
import { ClientPool, toolCall, type TestClient } from './helpers/world.ts';
import { bundledScript } from '../helpers/bundled-script.ts';

/**
 * Processes killed with SIGKILL: the gateway in the middle of a sync (and
 * started again on the same data), and the client with events in its outbox
 * (and right after the gateway answered an upload, before the client wrote
 * the answer down). Counted on both sides: nothing lost, nothing twice.
 */
const CHILD = fileURLToPath(new URL('./helpers/client-child.ts', import.meta.url));
let cloudDir: string;
let cloud: CloudChild;
let proxy: FaultProxy;
const pool = new ClientPool();

beforeAll(async () => {
  cloudDir = await mkdtemp(join(tmpdir(), 'gh-ck-'));
  cloud = await startCloudChild(cloudDir);
  proxy = await startFaultProxy(cloud.url);
}, 180_000);
afterAll(async () => {
  await pool.closeAll();
  await proxy?.close();
  await cloud?.stop();
  await rm(cloudDir, { recursive: true, force: true });
});

const connected = async () =>
  (
    await pool.connected(proxy.url, () => cloud.op('licenses.create', { plan: 'pro' }), {
      timeouts: { connectMs: 1000, interactiveMs: 5000, backgroundMs: 5000 },
      sleep: async () => {},
    })
  ).t;

/** The gateway's own count of the site's events today (usage/summary), through the client. */
async function cloudCount(t: TestClient): Promise<number> {
  return (await t.client.api!.usageSummary({ period: 'day' })).data.events;
}

describe('the gateway killed', () => {
  it('killed (SIGKILL) mid-sync, twice, and started again on the same data: every event counted once', async () => {
    const t = await connected();
    const c = t.client;
    const made = 500;
    for (let i = 0; i < made; i++) c.usage.record(toolCall());
    let uploads = 0;
    // first the gateway dies as the 2nd upload reaches it; then, started again, it dies right after storing a batch, before answering
    proxy.rule(({ path }) => {
      if (!path.endsWith('usage/record')) return undefined;
      uploads++;
      if (uploads === 2) {
        void cloud.kill();
        return { kind: 'delay', ms: 200 };
      }
      return undefined;
    });
    const first = await c.usage.flush();
    expect(first.ok).toBe(false);
    expect(first.sent).toBe(100);
    expect(c.status().breaker.state).toBe('open');

    cloud = await startCloudChild(cloudDir);
    proxy.setUpstream(cloud.url);
    t.clock.skewMs += 61_000;
    let again = 0;
    proxy.rule(({ path }) => {
      if (!path.endsWith('usage/record')) return undefined;
      again++;
      return again === 2 ? { kind: 'lose_answer', after: () => void cloud.kill() } : undefined;
    });
    const second = await c.usage.flush();
    expect(second.ok).toBe(false);

    cloud = await startCloudChild(cloudDir);
    proxy.setUpstream(cloud.url);
    proxy.rule(null);
    t.clock.skewMs += 121_000;
    const third = await c.usage.flush();
    expect(third).toMatchObject({ ok: true, remaining: 0 });

    const o = c.status().outbox;
    const stored = await cloudCount(t);
    console.log(
      `[fault counts] gateway SIGKILLed twice mid-sync: made ${made}, cloud counted ${stored}, client delivered ${o.delivered} (accepted ${o.accepted}, duplicate ${o.duplicate}), usage/record requests at proxy ${proxy.count('usage/record')}`,
    );
    expect(stored).toBe(made);
    expect(o.delivered).toBe(made);
    expect(o.depth).toBe(0);
  }, 300_000);
});

function runChild(
  dataDir: string,
  mode: string,
  events: number,
): { ready: Promise<void>; kill(): void; done: Promise<NodeJS.Signals | null> } {
  const p = spawn(process.execPath, [bundledScript(CHILD)], {
    env: { ...process.env, DATA_DIR: dataDir, MODE: mode, EVENTS: String(events) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  p.stderr!.on('data', (c: Buffer) => (err += String(c)));
  const done = new Promise<NodeJS.Signals | null>((resolve) => p.once('exit', (_code, signal) => resolve(signal)));
  const ready = new Promise<void>((resolve, reject) => {
    p.stdout!.on('data', (c: Buffer) => String(c).includes('READY') && resolve());
    void done.then(() => reject(new Error(`client child exited: ${err}`)));
  });
  ready.catch(() => undefined);
  return { ready, kill: () => p.kill('SIGKILL'), done };
}

describe('the client killed', () => {
  it('SIGKILL with 300 events in the outbox: all of them are there after the restart and counted once', async () => {
    const t = await connected();
    await t.client.close();
    const child = runChild(t.dataDir, 'record', 300);
    await child.ready;
    child.kill();
    expect(await child.done).toBe('SIGKILL');
    const c = await t.reopen();
    const afterRestart = c.status().outbox.depth;
    expect(afterRestart).toBe(300);
    await c.usage.flush();
    const stored = await cloudCount(t);
    console.log(
      `[fault counts] client SIGKILLed with events queued: made 300, outbox after restart ${afterRestart}, cloud counted ${stored}`,
    );
    expect(stored).toBe(300);
    expect(c.status().outbox).toMatchObject({ depth: 0, delivered: 300 });
  }, 120_000);

  it('SIGKILL between the gateway accepting a batch and the client writing it down: sent again, counted once', async () => {
    const t = await connected();
    await t.client.close();
    const child = runChild(t.dataDir, 'kill-after-answer', 150);
    expect(await child.done).toBe('SIGKILL');
    const c = await t.reopen();
    expect(c.status().outbox.depth).toBe(150); // the answer for the first 100 was never written down
    expect(await cloudCount(t)).toBe(100); // but the gateway has them
    proxy.reset();
    await c.usage.flush();
    const o = c.status().outbox;
    const stored = await cloudCount(t);
    console.log(
      `[fault counts] client SIGKILLed after the gateway's answer: made 150, cloud counted ${stored}, client delivered ${o.delivered} (accepted ${o.accepted}, duplicate ${o.duplicate}), uploads after restart ${proxy.count('usage/record')}`,
    );
    expect(stored).toBe(150);
    expect(o).toMatchObject({ depth: 0, delivered: 150 });
  }, 120_000);
});
