import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../../main/lib/logger.ts';
import { startService } from '../../../main/service.ts';
import { connectClient } from '../../helpers/service.ts';

/**
 * Audit files past their retention (audit_retention_days, 90 by default) are deleted at start, not only
 * by the hourly job: a laptop that sleeps, or a tray app restarted daily, never stays up an hour. A real
 * service writes a day's audit, stops, and starts again 200 days later by its clock.
 */
const DAY = 86_400_000;
let dir: string;
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A logger that tells when a message is logged. */
function listening(): { log: Logger; next: (msg: string) => Promise<Record<string, unknown>> } {
  const waiting: Array<{ msg: string; done: (f: Record<string, unknown>) => void }> = [];
  const seen = (msg: string, fields: Record<string, unknown> = {}) => {
    for (const w of waiting.filter((x) => x.msg === msg)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.done(fields);
    }
  };
  return {
    log: { debug: seen, info: seen, warn: seen, error: seen },
    next: (msg) => new Promise((done) => waiting.push({ msg, done })),
  };
}

describe('the audit sweep', () => {
  it('runs at start: a file older than the retention is gone once the service is up', async () => {
    dir = await mkdtemp(join(tmpdir(), 'gh-audit-sweep-'));
    let now = Date.parse('2026-03-01T10:00:00Z');
    const clock = { now: () => now };
    const first = await startService({
      dataDir: dir,
      port: 0,
      vault: 'file',
      enable: true,
      clock,
      log: listening().log,
    });
    const client = await connectClient(first.mcpUrl, (await first.createToken({ label: 'old' })).token);
    await client.callTool({ name: 'pages_list', arguments: {} });
    await client.close();
    await first.stop();
    const files = async () => (await readdir(join(dir, 'audit')).catch(() => [])).filter((n) => n.endsWith('.jsonl'));
    const before = await files();
    expect(before.length).toBeGreaterThan(0);

    now += 200 * DAY;
    const l = listening();
    const swept = l.next('audit: expired files deleted');
    const second = await startService({ dataDir: dir, port: 0, vault: 'file', enable: true, clock, log: l.log });
    try {
      expect(await swept).toMatchObject({ retention_days: 90 });
      expect((await files()).filter((n) => before.includes(n))).toEqual([]);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
