import { rm } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/client';
import { ADMIN_PREFIX, REST_PREFIX } from '../../../main/contract/health.ts';
import { createLogger } from '../../../main/lib/logger.ts';
import { startHarness, TEST_MASTER_KEY, type Harness } from '../../cloud/helpers/cloud-harness.ts';
import { startFaultProxy, type FaultProxy } from '../../fixtures/fault-proxy.ts';
import { startOpenAiFixture, type FixtureProvider } from '../../fixtures/ai-providers/fixture-provider.ts';
import { connectClient, startTestService } from '../../helpers/service.ts';
import type { Clock } from '../../../main/lib/clock.ts';
import { ADMIN_KEY_ACCOUNT } from '../../../main/store/vault-account.ts';

/**
 * The pieces of a service-side cloud test: the real reference gateway
 * (PGlite in memory, port 0), optionally a fixture AI provider behind it,
 * a counting fault proxy between the service and the gateway, and the real
 * Gatehouse service on its own data dir, reached over HTTP (admin API with
 * the admin key, local REST, the MCP endpoint through the real SDK client).
 */
export interface WireWorld {
  h: Harness;
  proxy: FaultProxy;
  ai: FixtureProvider | null;
  svc: Awaited<ReturnType<typeof startTestService>>;
  adminKey: string;
  /** an admin API call as the CLI would make it (admin key), answering the envelope */
  admin<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{
    status: number;
    body: { ok: boolean; data?: T; code?: string; message?: string; details?: Record<string, unknown> };
  }>;
  /** a local REST call (pro/*) with a bearer token or the admin key */
  rest<T = Record<string, unknown>>(
    method: string,
    path: string,
    o?: { token?: string; body?: unknown },
  ): Promise<{ status: number; body: T }>;
  mcp(token: string): Promise<Client>;
  /** the events the gateway stored for a site */
  storedEvents(siteId: string, event?: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startWireWorld(
  o: {
    ai?: boolean;
    service?: Parameters<typeof startTestService>[0];
    cloudClock?: Clock;
    harness?: Parameters<typeof startHarness>[0];
  } = {},
): Promise<WireWorld> {
  const ai = o.ai ? await startOpenAiFixture() : null;
  const h = await startHarness({
    env: { GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY, ...(ai ? { KEY_FIXTURE: ai.key } : {}) },
    log: createLogger({ level: 'error' }),
    ...(ai ? { ai: { hopTimeoutMs: 5000, deadlineMs: 20_000 } } : {}),
    ...o.harness,
  });
  if (ai)
    await h.op('providers.add', {
      id: 'fixture',
      kind: 'openai',
      base_url: ai.baseUrl,
      api_key_env: 'KEY_FIXTURE',
      models: ['small-1'],
      tags: ['eu'],
    });
  const proxy = await startFaultProxy(h.svc.baseUrl);
  const svc = await startTestService({
    cloud: {
      tickMs: 3_600_000,
      outbox: { intervalMs: 3_600_000 },
      timeouts: { connectMs: 2000, interactiveMs: 5000, backgroundMs: 5000 },
      sleep: async () => {},
      ...(o.cloudClock ? { clock: o.cloudClock } : {}),
    },
    ...o.service,
  });
  const adminKey = (await svc.core.vault.get(ADMIN_KEY_ACCOUNT))!;
  const json = async (res: Response) => {
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      return { raw: text };
    }
  };
  const w: WireWorld = {
    h,
    proxy,
    ai,
    svc,
    adminKey,
    async admin(method, path, body) {
      const res = await fetch(`${svc.baseUrl}${ADMIN_PREFIX}/${path}`, {
        method,
        headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: await json(res) };
    },
    async rest(method, path, ro = {}) {
      const res = await fetch(`${svc.baseUrl}${REST_PREFIX}/${path}`, {
        method,
        headers: { Authorization: `Bearer ${ro.token ?? adminKey}`, 'Content-Type': 'application/json' },
        ...(ro.body !== undefined ? { body: JSON.stringify(ro.body) } : {}),
      });
      return { status: res.status, body: await json(res) };
    },
    mcp: (token) => connectClient(svc.mcpUrl, token),
    storedEvents: async (siteId, event) =>
      Number(
        (
          await h.svc.ctx.db.query<{ n: string }>(
            `SELECT count(*) AS n FROM usage_events WHERE site_id = $1${event ? ' AND event = $2' : ''}`,
            event ? [siteId, event] : [siteId],
          )
        ).rows[0]!.n,
      ),
    async stop() {
      await svc.cleanup();
      await proxy.close();
      await h.stop();
      await ai?.close();
      await rm(h.dataDir, { recursive: true, force: true }).catch(() => undefined);
    },
  };
  return w;
}
