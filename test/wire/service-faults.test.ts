import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudStatusView, CloudUsageView } from '../../main/contract/cloud-actions.ts';
import { ADMIN_PREFIX, HealthReport } from '../../main/contract/health.ts';
import { createLogger } from '../../main/lib/logger.ts';
import { openVault } from '../../main/store/vault.ts';
import { ADMIN_KEY_ACCOUNT } from '../../main/store/vault-account.ts';
import { collect, spawnCli, startServe, type Served } from '../cli/cli-harness.ts';
import { startCloudChild, type CloudChild } from '../cloud-client/helpers/cloud-child.ts';
import { MovableClock } from '../cloud-client/helpers/world.ts';
import { startFaultProxy, type FaultProxy } from '../fixtures/fault-proxy.ts';
import { connectClient, startTestService } from '../helpers/service.ts';

/**
 * Faults between the service and the cloud gateway, with the gateway as its
 * own process (killed with SIGKILL, started again on the same data) behind a
 * counting proxy: the cloud killed mid-sync, the service SIGKILLed with
 * events in its outbox and right after the gateway stored a batch it never
 * heard back about. Usage is counted on both sides (the MCP calls the agent
 * made, the gateway's usage/summary): nothing lost, nothing twice; retries
 * are counted at the proxy; the MCP endpoint and the local REST keep
 * answering while the gateway is away. The figures are logged for the report.
 */
let cloudDir: string;
let cloud: CloudChild;
let proxy: FaultProxy;

beforeAll(async () => {
  cloudDir = await mkdtemp(join(tmpdir(), 'gh-wire-faults-'));
  cloud = await startCloudChild(cloudDir);
  proxy = await startFaultProxy(cloud.url);
}, 180_000);
afterAll(async () => {
  await proxy?.close();
  await cloud?.stop();
  await rm(cloudDir, { recursive: true, force: true });
});

async function restartCloud(): Promise<void> {
  cloud = await startCloudChild(cloudDir);
  proxy.setUpstream(cloud.url);
  proxy.rule(null);
}

const ok = <T>(r: { ok: boolean; data?: unknown; code?: string; message?: string }): T => {
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.data as T;
};

/** The service in this process (its cloud client on a clock the test moves), connected through the proxy with a pro license, and an agent's token. */
async function licensedService() {
  const clock = new MovableClock();
  const svc = await startTestService({
    cloud: {
      clock,
      tickMs: 3_600_000,
      outbox: { intervalMs: 3_600_000 },
      timeouts: { connectMs: 1000, interactiveMs: 5000, backgroundMs: 5000 },
      sleep: async () => {},
    },
  });
  ok(await svc.dispatch('cloud.connect', { url: proxy.url }));
  const lic = await cloud.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
  ok(await svc.dispatch('cloud.activate', { license_key: lic.license_key }));
  return { clock, svc, token: (await svc.createToken({ label: 'agent' })).token };
}

async function calls(mcpUrl: string, token: string, n: number): Promise<number> {
  const client = await connectClient(mcpUrl, token);
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const r = (await client.callTool({ name: 'pages_list', arguments: {} })) as { isError?: boolean };
    if (!r.isError) ok++;
  }
  await client.close();
  return ok;
}

describe('the gateway killed mid-sync, the service in-process', () => {
  it('no event lost or doubled, retries bounded, MCP and local REST answering while the gateway is away', async () => {
    const { clock, svc, token } = await licensedService();
    try {
      const before = await calls(svc.mcpUrl, token, 40);
      // the gateway stores the batch, then dies before its answer gets back
      proxy.rule(({ path }) =>
        path.endsWith('usage/record') ? { kind: 'lose_answer', after: () => void cloud.kill() } : undefined,
      );
      const sent0 = proxy.count();
      const failed = await svc.dispatch('cloud.sync', {});
      expect(failed.ok).toBe(false);
      const duringFailedSync = proxy.count() - sent0;
      // while the gateway is away: the MCP endpoint and the local REST answer, the health report says what to do
      const away = await calls(svc.mcpUrl, token, 15);
      expect(away).toBe(15);
      const rest = await fetch(`${svc.baseUrl}/wp-json/gatehouse/v1/pro/cloud/status`, {
        headers: { Authorization: `Bearer ${(await svc.core.vault.get(ADMIN_KEY_ACCOUNT))!}` },
      });
      expect(rest.status).toBe(200);
      const health = HealthReport.parse(ok(await svc.dispatch('health.get', {})));
      const cloudWarnings = health.warnings.filter((w) => w.code.startsWith('cloud_'));
      expect(cloudWarnings.length).toBeGreaterThan(0);
      // the open breaker: another sync (a person asking) is one probe, its attempts and nothing more
      const sent1 = proxy.count();
      expect((await svc.dispatch('cloud.sync', {})).ok).toBe(false);
      const whileOpen = proxy.count() - sent1;
      expect(whileOpen).toBeGreaterThan(0);
      expect(whileOpen).toBeLessThanOrEqual(3);
      expect(CloudStatusView.parse(ok(await svc.dispatch('cloud.status', {}))).outbox.depth).toBe(before + away);

      await restartCloud();
      clock.skewMs = 11 * 60_000; // past the breaker's wait (the cloud client's clock only)
      const sent2 = proxy.count();
      const sync = ok<{ outbox: { ok: boolean; remaining: number } }>(await svc.dispatch('cloud.sync', {}));
      expect(sync.outbox).toMatchObject({ ok: true, remaining: 0 });
      const afterRestart = proxy.count() - sent2;
      const usage = CloudUsageView.parse(ok(await svc.dispatch('cloud.usage', { period: 'day' })));
      expect(usage.source).toBe('cloud');
      const made = before + away;
      expect(usage.summary!.events).toBe(made);
      expect(usage.outbox.delivered).toBe(made);
      console.log(
        `[wire faults] gateway killed mid-sync: ${made} MCP calls made (${before} before, ${away} while the gateway was away); gateway counted ${usage.summary!.events}; outbox delivered ${usage.outbox.delivered} (accepted ${usage.outbox.accepted}, duplicate ${usage.outbox.duplicate}); requests: ${duringFailedSync} during the failed sync, ${whileOpen} while the breaker was open, ${afterRestart} for the sync after the restart; warnings while away: ${cloudWarnings.map((w) => w.code).join(', ')}`,
      );
      expect(duringFailedSync).toBeLessThanOrEqual(8);
    } finally {
      proxy.rule(null);
      await svc.cleanup();
    }
  });
});

describe('the local clock skewed', () => {
  it('3 hours behind: one clock resync, every event counted once, requests bounded', async () => {
    const { clock, svc, token } = await licensedService();
    try {
      clock.skewMs = -3 * 3600_000;
      const made = await calls(svc.mcpUrl, token, 25);
      const sent = proxy.count();
      const sync = ok<{ outbox: { ok: boolean; remaining: number }; certificate: string }>(
        await svc.dispatch('cloud.sync', {}),
      );
      expect(sync).toMatchObject({ outbox: { ok: true, remaining: 0 }, certificate: 'accepted' });
      const requests = proxy.count() - sent;
      const expired = proxy.seen.slice(-requests).filter((r) => r.status === 401).length;
      // The events carry the local (skewed) time and the gateway sums its own current period: just after midnight
      // UTC they are yesterday's, so the shortest period that holds both days is asked (this failed 00:00-03:00 UTC).
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      const period = day(clock.now()) === day(Date.now()) ? 'day' : 'month';
      const usage = CloudUsageView.parse(ok(await svc.dispatch('cloud.usage', { period })));
      expect(usage.summary!.events).toBe(made);
      const st = CloudStatusView.parse(ok(await svc.dispatch('cloud.status', {})));
      expect(Math.abs(st.clock.offset_ms - 3 * 3600_000)).toBeLessThan(60_000);
      expect(requests).toBeLessThanOrEqual(4);
      console.log(
        `[wire faults] clock 3 h behind: ${made} MCP calls made, gateway counted ${usage.summary!.events}; ${requests} requests for the sync (${expired} refused as expired before the offset was learned); offset learned ${Math.round(st.clock.offset_ms / 1000)} s`,
      );
    } finally {
      await svc.cleanup();
    }
  });
});

describe('the service killed with SIGKILL', () => {
  it('with events in its outbox, and right after the gateway stored a batch it never heard back about: every call counted once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gh-wire-kill-'));
    const vaultArgs = ['--vault', 'keychain'];
    const cli = async <T>(args: string[], stdin = ''): Promise<T> => {
      const child = spawnCli([...args, '--data-dir', dir, ...vaultArgs, '--json']);
      child.stdin.end(stdin);
      const r = await collect(child);
      if (r.code !== 0) throw new Error(`gatehouse ${args.join(' ')}: ${r.stderr}`);
      return JSON.parse(r.stdout) as T;
    };
    let served: Served | null = await startServe(dir, [], {}, vaultArgs);
    try {
      await cli(['cloud', 'connect', '--url', proxy.url]);
      const lic = await cloud.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
      await cli(['cloud', 'activate', '-'], lic.license_key);
      const token = (await cli<{ token: string }>(['tokens', 'create', '--label', 'agent'])).token;

      // 1. a full batch (100) starts an upload; the gateway stores it and the service is killed before the answer arrives
      const seenBefore = proxy.seen.length;
      const killed = served;
      const exited = new Promise((r) => killed.child.once('exit', r));
      proxy.rule(({ path }) =>
        path.endsWith('usage/record')
          ? { kind: 'lose_answer', after: () => void killed.child.kill('SIGKILL') }
          : undefined,
      );
      const first = await calls(served.info.mcp_url, token, 100);
      await exited;
      proxy.rule(null);
      const storedBatches = proxy.seen
        .slice(seenBefore)
        .filter((s) => s.path.endsWith('usage/record') && s.fault === 'lose_answer').length;

      // 2. started again: more calls stay in the outbox (below a batch, long interval), then SIGKILL again
      served = await startServe(dir, [], {}, vaultArgs);
      const second = await calls(served.info.mcp_url, token, 30);
      await served.stop('SIGKILL');

      // 3. started again: one sync uploads what is left; the batch the gateway already had is a duplicate, not a second count
      served = await startServe(dir, [], {}, vaultArgs);
      const sync = await cli<{ outbox: { ok: boolean; remaining: number } }>(['cloud', 'sync']);
      expect(sync.outbox).toMatchObject({ ok: true, remaining: 0 });
      const vault = await openVault({
        dataDir: dir,
        backend: 'keychain',
        log: createLogger({ level: 'error' }),
        warnFileVault: false,
      });
      const key = (await vault.get(ADMIN_KEY_ACCOUNT))!;
      const res = await fetch(`${served.info.base_url}${ADMIN_PREFIX}/cloud/usage?period=day`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      const usage = CloudUsageView.parse(((await res.json()) as { data: unknown }).data);
      const made = first + second;
      expect(first).toBe(100);
      expect(second).toBe(30);
      expect(usage.summary!.events).toBe(made);
      expect(usage.outbox.depth).toBe(0);
      console.log(
        `[wire faults] service SIGKILLed twice: ${made} MCP calls made (${first} before the first kill, ${storedBatches} upload(s) the gateway stored whose answer was lost; ${second} left in the outbox at the second kill); gateway counted ${usage.summary!.events}; after restart the outbox delivered ${usage.outbox.delivered} (duplicate ${usage.outbox.duplicate})`,
      );
    } finally {
      proxy.rule(null);
      await served?.stop('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
