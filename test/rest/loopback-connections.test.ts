import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_PATH } from '../../main/contract/health.ts';
import { rawRequest, rawSocket } from '../lib/http/serve.ts';
import { startTestService } from '../helpers/service.ts';

/**
 * The local service's callers are one person's programs, all on 127.0.0.1: fifty agents each holding a
 * notification stream and a keep-alive pool hold more than the 64 sockets one address may hold on the
 * cloud gateway. Loopback has no per-address cap here; the total cap answers 503, never a reset.
 */
let svc: Awaited<ReturnType<typeof startTestService>>;
let port: number;
beforeAll(async () => {
  svc = await startTestService();
  port = Number(new URL(svc.baseUrl).port);
});
afterAll(async () => svc?.cleanup());

describe('many connections from loopback', () => {
  it('holds 150 open sockets from 127.0.0.1 and still answers the next request', async () => {
    const held = await Promise.all(Array.from({ length: 150 }, () => rawSocket(port)));
    try {
      // answered (401 without a token), not dropped as the 65th socket of one address was
      const r = await rawRequest(
        port,
        `POST ${MCP_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json`,
        '{}',
      );
      expect(r.status).toBe(401);
      // none of the held ones was cut
      expect(held.filter((s) => s.destroyed || s.closed)).toHaveLength(0);
    } finally {
      for (const s of held) s.destroy();
    }
  });
});
