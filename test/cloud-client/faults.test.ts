import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CloudClientError } from '../../main/cloud-client/index.ts';
import { envelope, type Fault } from '../fixtures/fault-proxy.ts';
import { gatewaySuite, HOUR, toolCall } from './helpers/world.ts';

/**
 * The client policy under faults, between the client and the real gateway
 * through a fault proxy that counts every request: what is retried and what
 * is not, how often (never more than 3 attempts per logical request), the
 * breaker, Retry-After, the clock resync, and no usage event lost or
 * counted twice. Waits are recorded instead of slept (tests never assert
 * wall-clock time); request timeouts are real.
 */
const suite = gatewaySuite({ proxy: true });
const pool = suite.pool;
let delays: number[] = [];

async function connected() {
  const r = await pool.connected(suite.proxy.url, () => suite.gw.license('pro'), {
    timeouts: { connectMs: 1000, interactiveMs: 1500, backgroundMs: 1500 },
    sleep: async (ms: number) => void delays.push(ms),
  });
  suite.proxy.reset();
  delays = [];
  return r;
}

const attemptsOf = (requestId: string | null) => suite.proxy.seen.filter((s) => s.requestId === requestId);

describe('retries', () => {
  it('503 twice, then through: 3 attempts under one request id, X-Attempt 1..3, backoff within the policy', async () => {
    const { c } = await connected();
    suite.proxy.script({ kind: 'status', status: 503 }, { kind: 'status', status: 503 });
    const r = await c.sync();
    const tries = attemptsOf(r.request_id);
    expect(tries.map((s) => s.attempt)).toEqual(['1', '2', '3']);
    expect(tries.map((s) => s.fault)).toEqual(['status', 'status', 'pass']);
    // retry n waits min(0.5 s * 2^(n-1), 5 s) less up to half of it at random
    expect(delays).toHaveLength(2);
    expect(delays[0]).toBeGreaterThanOrEqual(250);
    expect(delays[0]).toBeLessThanOrEqual(500);
    expect(delays[1]).toBeGreaterThanOrEqual(500);
    expect(delays[1]).toBeLessThanOrEqual(1000);
  });

  it('dropped, reset, hanging and slow connections are retried', async () => {
    const { c } = await connected();
    suite.proxy.script({ kind: 'drop' }, { kind: 'reset' }, { kind: 'pass' });
    const r1 = await c.api!.siteStatus();
    expect(r1.attempts).toBe(3);
    suite.proxy.script({ kind: 'hang' }, { kind: 'delay', ms: 300 });
    const r2 = await c.api!.licenseStatus();
    expect(attemptsOf(r2.requestId).map((s) => s.fault)).toEqual(['hang', 'delay']);
  });

  it('429 rate_limited: Retry-After is honoured, then through', async () => {
    const { c } = await connected();
    suite.proxy.script({ kind: 'status', status: 429, retryAfter: '7', body: envelope('rate_limited') });
    const r = await c.api!.usageLimits();
    expect(r.attempts).toBe(2);
    expect(delays).toEqual([7000]);
  });

  it('never retries quota_exceeded, other 4xx, or a refusal', async () => {
    const { c } = await connected();
    const cases: Array<[Fault, string]> = [
      [
        {
          kind: 'status',
          status: 429,
          retryAfter: '3600',
          body: envelope('quota_exceeded', {
            scope: 'site',
            metric: 'ai_tokens',
            limit: 1,
            used: 1,
            reset_at: '2030-01-01T00:00:00Z',
          }),
        },
        'quota_exceeded',
      ],
      [
        { kind: 'status', status: 403, body: envelope('entitlement_required', { required_plan: 'agency' }) },
        'entitlement_required',
      ],
      [{ kind: 'status', status: 400 }, 'invalid_request'],
      [{ kind: 'status', status: 401, body: envelope('signature_invalid') }, 'signature_invalid'],
    ];
    for (const [fault, code] of cases) {
      suite.proxy.script(fault);
      const err = (await c.api!.entitlementsCheck('agency.sites').catch((e: unknown) => e)) as CloudClientError;
      expect(err).toBeInstanceOf(CloudClientError);
      expect(err).toMatchObject({ code, info: { attempts: 1, stopped: 'not_retryable' } });
      expect(attemptsOf(err.requestId)).toHaveLength(1);
    }
    const quota = c.status().last_errors.find((e) => e.code === 'quota_exceeded')!;
    expect(quota).toMatchObject({
      operation: 'entitlements/check',
      attempts: 1,
      stopped: 'not_retryable',
      http_status: 429,
    });
    expect(c.status().breaker.state).toBe('closed');
    expect(delays).toEqual([]);
  });

  it('a Retry-After beyond 30 s ends an interactive request at once', async () => {
    const { c } = await connected();
    suite.proxy.script({ kind: 'status', status: 503, retryAfter: '45' });
    const err = (await c.api!.siteStatus().catch((e: unknown) => e)) as CloudClientError;
    expect(err).toMatchObject({ code: 'gateway_unavailable', info: { attempts: 1, stopped: 'retry_after_too_long' } });
    expect(suite.proxy.count()).toBe(1);
    // and the breaker stays open at least as long as the gateway asked
    expect(Date.parse(c.status().breaker.open_until!) - Date.now()).toBeGreaterThanOrEqual(44_000);
  });

  it('background calls wait out a Retry-After up to 60 s', async () => {
    const { c } = await connected();
    suite.proxy.script({ kind: 'status', status: 503, retryAfter: '45' });
    const r = await c.api!.siteStatus({ mode: 'background' });
    expect(r.attempts).toBe(2);
    expect(delays).toEqual([45_000]);
  });
});

describe('circuit breaker', () => {
  it('opens after retries run out, sends nothing while open, lets one probe through after 60 s, doubles on a failed probe, closes on success', async () => {
    const { t, c } = await connected();
    suite.proxy.rule(() => ({ kind: 'status', status: 503 }));
    const e1 = (await c.api!.siteStatus().catch((e: unknown) => e)) as CloudClientError;
    expect(e1).toMatchObject({ code: 'gateway_unavailable', info: { attempts: 3, stopped: 'attempts_exhausted' } });
    expect(suite.proxy.count()).toBe(3);
    expect(c.status().breaker).toMatchObject({ state: 'open', open_ms: 60_000, trips: 1 });
    expect(c.status().health.gateway.connected).toBe(false);
    expect(c.status().warnings.map((w) => w.code)).toContain('cloud_gateway_unreachable');

    for (let i = 0; i < 5; i++)
      await expect(c.api!.siteStatus()).rejects.toMatchObject({ info: { stopped: 'breaker_open', attempts: 0 } });
    expect(suite.proxy.count()).toBe(3);

    t.clock.skewMs += 61_000;
    await expect(c.api!.siteStatus()).rejects.toMatchObject({ info: { stopped: 'attempts_exhausted' } });
    expect(suite.proxy.count()).toBe(6);
    expect(c.status().breaker).toMatchObject({ state: 'open', open_ms: 120_000, trips: 2 });

    suite.proxy.rule(null);
    t.clock.skewMs += 121_000;
    await c.api!.siteStatus();
    expect(c.status().breaker).toMatchObject({ state: 'closed', trips: 0 });
    expect(c.status().health.gateway.connected).toBe(true);
  });

  it('a manual sync probes the gateway at once whatever the saved breaker says (after a restart too); a failed probe opens it again', async () => {
    const { t } = await connected();
    suite.proxy.rule(() => ({ kind: 'status', status: 503 }));
    await expect(t.client.sync()).rejects.toMatchObject({ code: 'gateway_unavailable' });
    expect(t.client.status().breaker).toMatchObject({ state: 'open', trips: 1 });
    await t.reopen();
    expect(t.client.status().breaker).toMatchObject({ state: 'open', trips: 1 });
    // still down: the manual sync is one probe (its attempts), then the breaker is open again, for longer, and the rest of the sync is not sent
    const sent = suite.proxy.count();
    await expect(t.client.sync()).rejects.toMatchObject({ code: 'gateway_unavailable' });
    expect(suite.proxy.count() - sent).toBe(3);
    expect(t.client.status().breaker).toMatchObject({ state: 'open', trips: 2, open_ms: 120_000 });
    // the gateway is back: the next manual sync goes through at once and closes the breaker
    suite.proxy.rule(null);
    const r = await t.client.sync();
    expect(r.certificate).toBe('accepted');
    expect(t.client.status().breaker).toMatchObject({ state: 'closed', trips: 0 });
  });

  it('grows to at most 10 minutes', async () => {
    const { t, c } = await connected();
    suite.proxy.rule(() => ({ kind: 'reset' }));
    let last = 0;
    for (let i = 0; i < 6; i++) {
      await expect(c.api!.siteStatus()).rejects.toMatchObject({ code: 'gateway_unavailable' });
      last = c.status().breaker.open_ms;
      t.clock.skewMs += last + 1000;
    }
    expect(last).toBe(600_000);
    expect(suite.proxy.count()).toBe(18);
  });

  it('the gates keep answering, from the certificate, without a request, while the gateway is away', async () => {
    const { c } = await connected();
    suite.proxy.rule(() => ({ kind: 'hang' }));
    expect(await c.entitlements.check('verto.translate')).toMatchObject({ allowed: true });
    expect(c.status().connected).toBe(true);
    expect(suite.proxy.count()).toBe(0);
  });
});

describe('background refresh', () => {
  it('is due daily; a failed one backs off to minutes and the breaker, never a tight loop', async () => {
    const { t, c } = await connected();
    // the day passes on both sides (the gateway's clock follows the client's)
    const both = (ms: number) => void (t.clock.skewMs = suite.gw.clock.skewMs = ms);
    try {
      const due = Date.parse(c.status().next_refresh_at!);
      expect(due - Date.now()).toBeGreaterThan(22 * HOUR - 60_000);
      await c.tick();
      expect(suite.proxy.count()).toBe(0);

      both(due - Date.now() + 1000);
      suite.proxy.rule(() => ({ kind: 'status', status: 503 }));
      await c.tick();
      expect(suite.proxy.count('sites/sync')).toBe(3);
      for (let i = 0; i < 5; i++) await c.tick();
      expect(suite.proxy.count()).toBe(3);
      const s = c.status();
      expect(Date.parse(s.next_refresh_at!) - c.status().breaker.open_ms).toBeGreaterThanOrEqual(
        Date.now() + t.clock.skewMs - 1000,
      );
      expect(s.warnings.map((w) => w.code)).toContain('cloud_gateway_unreachable');
      expect(await c.entitlements.check('verto.translate')).toMatchObject({ allowed: true });

      suite.proxy.rule(null);
      both(Date.parse(s.next_refresh_at!) - Date.now() + 1000);
      await c.tick();
      expect(suite.proxy.count()).toBe(4); // one more request: sites/sync (the outbox is empty; no token_expired, the clocks agree)
      expect(c.status()).toMatchObject({ breaker: { state: 'closed' }, warnings: [] });
      expect(Date.parse(c.status().next_refresh_at!) - (Date.now() + t.clock.skewMs)).toBeGreaterThan(
        22 * HOUR - 60_000,
      );
    } finally {
      suite.gw.clock.skewMs = 0;
    }
  });
});

describe('clock skew', () => {
  it('a local clock an hour ahead: one token_expired, one resync, one re-signed attempt; events stamped with the gateway time', async () => {
    const { t, c, siteId } = await connected();
    t.clock.skewMs = HOUR;
    for (let i = 0; i < 5; i++) c.usage.record(toolCall(1, t.clock));
    const r = await c.sync();
    expect(r.outbox).toMatchObject({ ok: true, sent: 5 });
    const upload = suite.proxy.seen.find((s) => s.path.endsWith('usage/record'))!;
    expect(attemptsOf(upload.requestId).map((s) => [s.attempt, s.status])).toEqual([
      ['1', 401],
      ['2', 200],
    ]);
    // that batch was made with the old offset: the gateway refused its times, so it went once more, stamped anew
    expect(suite.proxy.seen.filter((s) => s.path.endsWith('usage/record'))).toHaveLength(3);
    expect(attemptsOf(r.request_id)).toHaveLength(1); // the offset is kept for the next request
    expect(c.status().clock.offset_ms).toBeLessThan(-HOUR + 60_000);
    const rows = (
      await suite.gw.h.svc.ctx.db.query<{ occurred_at: Date }>(
        'SELECT occurred_at FROM usage_events WHERE site_id = $1',
        [siteId],
      )
    ).rows;
    expect(rows).toHaveLength(5);
    for (const row of rows) expect(Math.abs(new Date(row.occurred_at).getTime() - Date.now())).toBeLessThan(60_000);
    expect(delays).toEqual([0]);
  });
});

describe('the clock from signed data only', () => {
  it("an unsigned server_time forged into token_expired answers neither moves the gates' clock nor lowers the high-water mark: an expired certificate stays expired", async () => {
    const { t, c } = await connected();
    const cert = c.status().certificate!;
    expect(cert.usable).toBe(true);
    t.clock.skewMs = Date.parse(cert.grants_until) - Date.now() + HOUR; // the certificate has run out
    expect(c.status().certificate).toMatchObject({ usable: false, reason: 'expired' });
    const before = c.status().clock.offset_ms;
    // a man in the middle answers every request with a token_expired whose server_time is the certificate's own issue time
    suite.proxy.rule(() => ({
      kind: 'status',
      status: 401,
      body: envelope('token_expired', { retryable: true, server_time: cert.issued_at }),
    }));
    await expect(c.sync()).rejects.toMatchObject({ code: 'token_expired' });
    expect(suite.proxy.count('sites/sync')).toBe(2); // re-signed once with the unsigned time, as the protocol says
    expect(c.status().clock.offset_ms).toBe(before);
    expect(c.status().certificate).toMatchObject({ usable: false, reason: 'expired' });
    expect(await c.entitlements.check('verto.translate')).toMatchObject({ allowed: false });
    await t.reopen();
    expect(t.client.status().certificate).toMatchObject({ usable: false, reason: 'expired' });
    const saved = JSON.parse(await readFile(join(t.dataDir, 'cloud-state.json'), 'utf8')) as {
      clock: { high_water_ms: number };
    };
    expect(saved.clock.high_water_ms).toBeGreaterThanOrEqual(Date.parse(cert.issued_at));
    // the gateway itself (no proxy fault): a fresh signed certificate sets the clock; the mark never went back
    suite.proxy.rule(null);
    const r = await t.client.sync();
    expect(r.certificate).toBe('accepted');
    expect(t.client.status().clock.offset_ms).toBeLessThan(
      -(Date.parse(cert.grants_until) - Date.parse(cert.issued_at)),
    );
  });
});

describe('no usage event lost or counted twice', () => {
  it('an answer lost after the gateway stored the batch: the retry is the same request (same key, same body), counted once', async () => {
    const { c, siteId } = await connected();
    for (let i = 0; i < 30; i++) c.usage.record(toolCall());
    suite.proxy.script({ kind: 'lose_answer' });
    const r = await c.usage.flush();
    expect(r).toMatchObject({ ok: true, sent: 30 });
    const uploads = suite.proxy.seen.filter((s) => s.path.endsWith('usage/record'));
    expect(uploads).toHaveLength(2);
    expect(uploads[0]!.idempotencyKey).toBe(uploads[1]!.idempotencyKey);
    expect(uploads[0]!.status).toBe(200);
    expect(await suite.gw.storedEvents(siteId)).toBe(30);
    expect(c.status().outbox).toMatchObject({ delivered: 30, accepted: 30 });
  });

  it('chaos: 600 events through drops, resets, 503s, 429s, lost answers and hangs; both sides count 600, no request tried more than 3 times', async () => {
    const { t, c, siteId } = await connected();
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const faults: Fault[] = [
      { kind: 'status', status: 503 },
      { kind: 'status', status: 502 },
      { kind: 'status', status: 429, retryAfter: '1', body: envelope('rate_limited') },
      { kind: 'drop' },
      { kind: 'reset' },
      { kind: 'lose_answer' },
      { kind: 'hang' },
      { kind: 'delay', ms: 50 },
    ];
    suite.proxy.rule(() => (rand() < 0.45 ? faults[Math.floor(rand() * faults.length)] : undefined));
    const made = 600;
    let flushes = 0;
    let failedFlushes = 0;
    let breakerOpened = 0;
    const flush = async () => {
      flushes++;
      const r = await c.usage.flush();
      if (r.ok) return;
      failedFlushes++;
      if (c.status().breaker.state !== 'open') return;
      breakerOpened++;
      t.clock.skewMs = Date.parse(c.status().breaker.open_until!) - Date.now() + 1000;
    };
    for (let i = 0; i < made; i++) {
      c.usage.record(toolCall());
      if (i % 10 === 9) await flush();
    }
    for (let i = 0; i < 200 && c.usage.depth > 0; i++) await flush();
    suite.proxy.rule(null);
    const o = c.status().outbox;
    const stored = await suite.gw.storedEvents(siteId);
    const uploads = suite.proxy.seen.filter((s) => s.path.endsWith('usage/record'));
    const perRequest = new Map<string, number>();
    for (const s of uploads) perRequest.set(s.requestId!, (perRequest.get(s.requestId!) ?? 0) + 1);
    const faulted = uploads.filter((s) => s.fault !== 'pass' && s.fault !== 'delay').length;
    console.log(
      `[fault counts] chaos: made ${made}, cloud stored ${stored}, client delivered ${o.delivered} (accepted ${o.accepted}, duplicate ${o.duplicate}), ` +
        `flushes ${flushes}, logical uploads ${perRequest.size}, HTTP requests at proxy ${uploads.length} (faulted ${faulted}), max attempts per request ${Math.max(...perRequest.values())}, failed flushes ${failedFlushes}, breaker opened ${breakerOpened}`,
    );
    expect(o.depth).toBe(0);
    expect(stored).toBe(made);
    expect(o.delivered).toBe(made);
    expect(o.accepted + o.duplicate).toBe(made);
    expect(Math.max(...perRequest.values())).toBeLessThanOrEqual(3);
    expect(faulted).toBeGreaterThan(10);
  });
});
