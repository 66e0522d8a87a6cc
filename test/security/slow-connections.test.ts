import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_PATH } from '../../main/contract/health.ts';
import { startHarness, type Harness } from '../cloud/helpers/cloud-harness.ts';
import { startTestService } from '../helpers/service.ts';
import { getFrom, slowHeaders } from '../lib/http/slow-clients.ts';

/**
 * One address holding 300 connections with headers that never
 * finish used to take all 256 slots of the gateway and of the app. With the
 * per-address cap (main/lib/http/server.ts) another address is still served by the gateway; the app,
 * on loopback only, holds 1,024 and has no per-address cap.
 */
const SLOW = 300;

describe('300 slow-header connections from one address', { timeout: 60_000 }, () => {
  let cloud: Harness;
  let app: Awaited<ReturnType<typeof startTestService>>;
  beforeAll(async () => {
    [cloud, app] = await Promise.all([startHarness(), startTestService()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([cloud?.stop(), app?.cleanup()]);
  });

  it('the cloud gateway still answers another address', async () => {
    const slow = await slowHeaders(Number(new URL(cloud.svc.baseUrl).port), SLOW, '127.0.0.1');
    try {
      expect(slow.open()).toBe(64);
      expect(await getFrom(`${cloud.svc.baseUrl}/health/live`, '127.0.0.2')).toBe(200);
    } finally {
      slow.close();
    }
  });

  it("the app's service still answers another address", async () => {
    // On loopback every caller is the person's own program: no cap per address, 1,024 in all (main/service.ts),
    // so the 300 are all held (until the header timeout cuts them) and another caller is still served.
    const base = new URL(app.baseUrl);
    const slow = await slowHeaders(Number(base.port), SLOW, '127.0.0.1');
    try {
      expect(slow.open()).toBe(SLOW);
      // GET on the MCP endpoint is a 405 by design: any real answer shows the connection was served.
      expect(await getFrom(`${base.origin}${MCP_PATH}`, '127.0.0.2')).toBe(405);
    } finally {
      slow.close();
    }
  });
});
