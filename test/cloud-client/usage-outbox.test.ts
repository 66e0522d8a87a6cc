import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OUTBOX_FILE } from '../../main/cloud-client/index.ts';
import { uuidv7 } from '../../main/lib/ids.ts';
import { gatewaySuite, toolCall } from './helpers/world.ts';

/**
 * The usage outbox against the real gateway: what is made is what the
 * gateway counts, exactly; what is refused is counted and said; nothing
 * waits in memory only.
 */
const suite = gatewaySuite();
const pool = suite.pool;

const connected = (o: Parameters<typeof pool.fresh>[0] = {}) =>
  pool.connected(suite.gw.url, () => suite.gw.license('pro'), o);

describe('usage outbox', () => {
  it('uploads every event once, in batches of 100, and the gateway counts exactly as many', async () => {
    const { c, siteId } = await connected();
    for (let i = 0; i < 250; i++) c.usage.record(toolCall());
    const r = await c.usage.flush('interactive');
    expect(r).toEqual({ ok: true, sent: 250, remaining: 0 });
    expect(await suite.gw.storedEvents(siteId)).toBe(250);
    expect(c.status().outbox).toMatchObject({ depth: 0, delivered: 250, accepted: 250, duplicate: 0, rejected: 0 });
    expect(c.status().health.gateway.usage).toBe('synced');
    const summary = (await c.api!.usageSummary({ period: 'day' })).data;
    expect(summary.events).toBe(250);
    expect(summary.totals.mcp_actions).toBe(250);
  });

  it('keeps the id and time the pipeline gave an event', async () => {
    const { c, siteId } = await connected();
    const id = uuidv7();
    c.usage.record({ ...toolCall(), event_id: id, timestamp: new Date(Date.now() - 60_000).toISOString() });
    c.usage.record({ ...toolCall(), event_id: id, timestamp: new Date().toISOString() }); // same id: one event
    await c.usage.flush();
    expect(await suite.gw.storedEvents(siteId)).toBe(1);
    const row = (
      await suite.gw.h.svc.ctx.db.query<{ site_id: string; occurred_at: Date }>(
        'SELECT site_id, occurred_at FROM usage_events WHERE event_id = $1',
        [id],
      )
    ).rows[0]!;
    expect(row.site_id).toBe(siteId);
    expect(Math.abs(new Date(row.occurred_at).getTime() - (Date.now() - 60_000))).toBeLessThan(5_000);
  });

  it('sends full batches on its own, without waiting for the interval', async () => {
    const { c, siteId } = await connected({ outbox: { intervalMs: 3_600_000 } });
    c.start();
    for (let i = 0; i < 100; i++) c.usage.record(toolCall());
    await expect.poll(() => suite.gw.storedEvents(siteId), { timeout: 10_000 }).toBe(100);
  });

  it('does not queue what it must not: unconnected, AI generations (the cloud records them), invalid events', async () => {
    const t = await pool.fresh();
    t.client.usage.record(toolCall());
    expect(t.client.status().outbox).toMatchObject({ depth: 0, unconnected: 1 });
    await t.client.connect({ url: suite.gw.url });
    t.client.usage.record({
      ...toolCall(),
      event: 'ai.generation.completed',
      product: 'verto',
      feature: 'verto.translate',
      model: 'm',
      tokens_input: 10,
      tokens_output: 20,
    });
    t.client.usage.record({ ...toolCall(), product: 'bogus' });
    t.client.usage.record({ ...toolCall(), feature: 'x\u0000y' });
    expect(t.client.status().outbox).toMatchObject({ depth: 0, cloud_recorded: 1, invalid: 2 });
    expect(t.logs()).toMatch(/not a valid cloud usage event/);
  });

  it('events refused for quota are counted and kept with their reason, never lost silently', async () => {
    const { c, siteId } = await connected();
    await suite.gw.op('limits.set', { scope: 'site', subject: siteId, metric: 'mcp_actions', period: 'day', limit: 3 });
    for (let i = 0; i < 5; i++) c.usage.record(toolCall());
    await c.usage.flush();
    const o = c.status().outbox;
    expect(o).toMatchObject({ depth: 0, accepted: 3, rejected: 2 });
    expect(o.recent_rejections[0]).toMatchObject({ reason: 'quota_exceeded' });
    expect(await suite.gw.storedEvents(siteId)).toBe(3);
  });

  it('is bounded: past capacity events are refused, counted, logged and shown, and it drains when it can', async () => {
    const { t, c, siteId } = await connected({ outbox: { capacity: 10 } });
    for (let i = 0; i < 13; i++) c.usage.record(toolCall());
    const s = c.status();
    expect(s.outbox).toMatchObject({ depth: 10, full: true, refused_full: 3 });
    expect(s.health.gateway.usage).toBe('full');
    expect(s.warnings.map((w) => w.code)).toContain('cloud_outbox_full');
    expect(t.logs()).toMatch(/outbox: full/);
    await c.sync();
    expect(c.status().outbox).toMatchObject({ depth: 0, full: false, delivered: 10 });
    expect(await suite.gw.storedEvents(siteId)).toBe(10);
  });

  it('keeps queued events across a restart and a torn last line in the journal', async () => {
    const { t, siteId } = await connected();
    for (let i = 0; i < 40; i++) t.client.usage.record(toolCall());
    await t.client.close();
    await appendFile(join(t.dataDir, OUTBOX_FILE), '{"a":{"event_id":"01'); // a write cut by a power loss
    const c = await t.reopen();
    expect(c.status().outbox.depth).toBe(40);
    c.usage.record(toolCall());
    await c.usage.flush();
    expect(await suite.gw.storedEvents(siteId)).toBe(41);
    const journal = await readFile(join(t.dataDir, OUTBOX_FILE), 'utf8');
    expect(journal.endsWith('\n')).toBe(true);
    expect(journal).not.toContain('"event_id":"01\n');
  });

  it('writes off, and says so, what a disconnect leaves unsent', async () => {
    const { t } = await connected();
    await suite.gw.op('sites.disconnect', { id: t.client.status().site_id! });
    for (let i = 0; i < 4; i++) t.client.usage.record(toolCall());
    const r = await t.client.usage.flush();
    expect(r).toMatchObject({ ok: false, remaining: 4, error: { code: 'invalid_site' } });
    expect(t.client.status().warnings.map((w) => w.code)).toContain('cloud_site_refused');
    expect(t.client.status().health.gateway.cloud_token).toBe('invalid');
    // no more events queued for an identity the gateway refused
    t.client.usage.record(toolCall());
    expect(t.client.status().outbox.depth).toBe(4);
    const d = await t.client.disconnect();
    expect(d.unsent_events).toBe(4);
    // the written-off events are the old site's history; the outbox starts from zero
    expect(t.client.status().previous_site).toMatchObject({ abandoned: 4 });
    expect(t.client.status().outbox).toMatchObject({ depth: 0, abandoned: 0 });
  });
});
