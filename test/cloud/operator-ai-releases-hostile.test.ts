import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../main/lib/logger.ts';
import { MAX_ACTIVE_REPORTS } from '../../cloud/services/reports-service.ts';
import { MAX_ACCOUNT_LIMITS } from '../../cloud/services/enterprise-service.ts';
import { release, reserve, settle, sweepReservations } from '../../cloud/services/reservations-service.ts';
import { siteById } from '../../cloud/repo/sites-repo.ts';
import { pruneLog } from '../../cloud/repo/request-log-repo.ts';
import { uuidv7 } from '../../main/lib/ids.ts';
import { rawRequest } from './helpers/client.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';
import { accountWithSites } from './helpers/accounts.ts';

/**
 * The operator, AI and release routes read as an attacker would, against the real service:
 * the lowest-privilege caller with the worst value, what the service keeps
 * of it, and where a secret could leak. Each test here failed before the fix
 * it names in its commit.
 */
let h: Harness;
const lines: string[] = [];

const account = (plan: string, n: number) => accountWithSites(h, plan, n);

const as = (key: string, path: string, o: { method?: string; body?: unknown } = {}) =>
  rawRequest(
    `${h.gateway}/${path}`,
    o.method ?? 'GET',
    { Authorization: `Bearer ${key}` },
    o.body === undefined ? undefined : JSON.stringify(o.body),
  );

beforeAll(async () => {
  // Every log line the service writes, at every level, kept for the secret checks.
  const stream = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString('utf8')), done()) });
  const log = createLogger({ level: 'debug', stream });
  h = await startHarness({ log });
}, 180_000);
afterAll(() => h?.stop());

describe('agency/reports: at most MAX_ACTIVE_REPORTS at once per account', () => {
  it('holds under concurrent requests, not only one after another', async () => {
    const own = await account('agency', 0);
    // Keep queued tasks queued: nothing on this instance runs them while we count.
    const runner = h.svc.ctx.tasks as unknown as { kick(): void };
    const kick = runner.kick;
    runner.kick = () => {};
    try {
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => as(own.key, 'agency/reports', { method: 'POST', body: {} })),
      );
      const accepted = answers.filter((a) => a.status === 202).length;
      expect(answers.every((a) => a.status === 202 || (a.status === 429 && a.body.error.code === 'rate_limited'))).toBe(
        true,
      );
      expect(accepted).toBe(MAX_ACTIVE_REPORTS);
      const n = await h.svc.ctx.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM cloud_tasks WHERE account_id = $1 AND status IN ('queued', 'running')`,
        [own.id],
      );
      expect(n.rows[0]!.n).toBe(MAX_ACTIVE_REPORTS);
    } finally {
      runner.kick = kick;
    }
  });
});

describe('download tokens stay out of the log', () => {
  /** A live feed URL for a product nobody else in this file uses. */
  async function feedUrl(product: string): Promise<{ url: string; token: string; channel: string }> {
    const own = await account('enterprise', 1);
    const r = await own.sites[0]!.get('updates/check', { query: `product=${product}&version=1.0.0` });
    expect(r.status).toBe(200);
    const url = r.body.feed_url as string;
    const token = /updates\/files\/([^/]+)\/$/.exec(url)![1]!;
    return { url, token, channel: r.body.channel as string };
  }

  it('not in the line of a refused path that carries one', async () => {
    const { url, token } = await feedUrl('zzreview');
    const r = await rawRequest(`${url}a/b`, 'GET', {});
    expect(r.status).toBe(404);
    await new Promise((res) => setTimeout(res, 10));
    expect(lines.join('')).not.toContain(token);
    expect(lines.join('')).not.toContain(token.split('.')[1]!);
  });

  it('not in the line of a failure inside the download route', async () => {
    const { url, token, channel } = await feedUrl('zzbroken');
    // A release row the code cannot read: the route fails with a bug, not a refusal.
    await h.svc.ctx.db.query(
      `INSERT INTO releases (id, product, channel, version, manifest, signed, published_at, updated_at) VALUES ('rel_review', 'zzbroken', $1, '9.9.9', '{}', '{}', now(), now())`,
      [channel],
    );
    const r = await rawRequest(`${url}latest-linux.yml`, 'GET', {});
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe('internal_error');
    await new Promise((res) => setTimeout(res, 10));
    const text = lines.join('');
    // The failure is logged (with its request id), only without the token.
    expect(text).toContain(r.body.error.request_id);
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split('.')[1]!);
  });
});

describe('enterprise/limits: what one account key can make the service store', () => {
  it('is bounded: department names are free, the number of limits is not', async () => {
    const own = await account('enterprise', 0);
    const set = (subject: string, limit: number | null) =>
      as(own.key, 'enterprise/limits', {
        method: 'POST',
        body: { scope: 'department', subject, metric: 'mcp_actions', period: 'day', limit },
      });
    expect((await set('d0', 5)).status).toBe(200);
    // The rest up to the cap stored directly: thousands of requests would only make the test slow.
    await h.svc.ctx.db.query(
      `INSERT INTO usage_limits (scope, subject, metric, period, limit_value, updated_at, set_by)
       SELECT 'department', $1 || '/d' || g, 'mcp_actions', 'day', 5, now(), 'account' FROM generate_series(1, $2::int - 1) g`,
      [own.id, MAX_ACCOUNT_LIMITS],
    );
    const over = await set('one-more', 5);
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({ code: 'conflict', max_limits: MAX_ACCOUNT_LIMITS });
    // Changing or removing a limit it has still works, and removing one makes room.
    expect((await set('d0', 7)).status).toBe(200);
    expect((await set('d0', null)).status).toBe(200);
    expect((await set('one-more', 5)).status).toBe(200);
    const n = await h.svc.ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM usage_limits WHERE starts_with(subject, $1 || '/')`,
      [own.id],
    );
    expect(n.rows[0]!.n).toBe(MAX_ACCOUNT_LIMITS);
  });
});

describe('AI holds: what every generation leaves behind', () => {
  it('closed reservations are forgotten a day after they close; a hold still running is kept', async () => {
    const own = await account('pro', 1);
    const site = (await siteById(h.svc.ctx.db, own.sites[0]!.creds.site_id))!;
    const released = await reserve(h.svc.ctx, site, 'ai_tokens', 10);
    await release(h.svc.ctx, released.id);
    const settled = await reserve(h.svc.ctx, site, 'ai_tokens', 10);
    const event = {
      event_id: uuidv7(),
      event: 'ai.generation.completed',
      site_id: site.id,
      product: 'pro' as const,
      feature: 'ai.generate',
      model: 'm',
      units: 1,
      tokens_input: 3,
      tokens_output: 2,
      timestamp: new Date().toISOString(),
    };
    expect(await settle(h.svc.ctx, site, settled, event)).toBe(true);
    const running = await reserve(h.svc.ctx, site, 'ai_tokens', 10, 3 * 86_400_000);
    const rows = async () =>
      (
        await h.svc.ctx.db.query<{ id: string }>('SELECT id FROM usage_reservations WHERE site_id = $1 ORDER BY id', [
          site.id,
        ])
      ).rows
        .map((r) => r.id)
        .sort();

    // The housekeeping sweep an hour later keeps them; two days later only the running hold is left.
    await sweepReservations({ db: h.svc.ctx.db, now: () => new Date(Date.now() + 3_600_000) });
    expect(await rows()).toEqual([released.id, settled.id, running.id].sort());
    await sweepReservations({ db: h.svc.ctx.db, now: () => new Date(Date.now() + 2 * 86_400_000) });
    expect(await rows()).toEqual([running.id]);
    // The settled usage stays counted: only the hold's bookkeeping went.
    const used = await h.svc.ctx.db.query<{ used: number }>(
      `SELECT used::int FROM usage_counters WHERE scope = 'site' AND subject = $1 AND metric = 'ai_tokens' AND period = 'month'`,
      [site.id],
    );
    expect(used.rows[0]!.used).toBe(5);
  });
});

describe('the request log belongs to the accounts', () => {
  it("anonymous requests cannot push an account's requests out of it", async () => {
    const small = await startHarness({ requestLog: { maxRows: 20 } });
    try {
      const { key, sites } = await accountWithSites(small, 'enterprise', 1);
      const site = sites[0]!;
      expect((await site.get('sites/status', { headers: { 'X-Request-Id': 'mine-1' } })).status).toBe(200);
      // Anyone on the network, without a key or a signature: more requests than the log keeps.
      for (let i = 0; i < 40; i++) await rawRequest(`${small.gateway}/sites/status`, 'GET', {});
      await small.svc.ctx.requestLog.flush();
      await small.svc.ctx.requestLog.prune(new Date());
      const r = await rawRequest(`${small.gateway}/enterprise/logs`, 'GET', { Authorization: `Bearer ${key}` });
      expect(r.status).toBe(200);
      const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
      expect(text).toContain('"request_id":"mine-1"');
    } finally {
      await small.stop();
    }
  });
});

describe('updates/verify without a manifest', () => {
  it('accepts a file of the same version published on another channel with other bytes', async () => {
    const own = await account('pro', 1);
    const dir = await mkdtemp(join(tmpdir(), 'gh-review-rel-'));
    try {
      const name = 'Gatehouse-7.0.0.AppImage';
      const publish = async (channel: string, bytes: Buffer) => {
        await writeFile(join(dir, name), bytes);
        await h.op('releases.publish', { product: 'zzverify', channel, version: '7.0.0', files: [join(dir, name)] });
      };
      const beta = Buffer.alloc(300, 1);
      const stable = Buffer.alloc(400, 2);
      await publish('beta', beta);
      await publish('stable', stable);
      for (const bytes of [beta, stable]) {
        const r = await own.sites[0]!.post('updates/verify', {
          product: 'zzverify',
          version: '7.0.0',
          name,
          sha512: createHash('sha512').update(bytes).digest('base64'),
          size: bytes.length,
        });
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ valid: true, reason: null });
      }
      const forged = Buffer.alloc(400, 3);
      const bad = await own.sites[0]!.post('updates/verify', {
        product: 'zzverify',
        version: '7.0.0',
        name,
        sha512: createHash('sha512').update(forged).digest('base64'),
        size: forged.length,
      });
      expect(bad.body).toMatchObject({ valid: false });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the request log between accounts', () => {
  it("one busy account cannot push another account's requests out of it", async () => {
    const small = await startHarness({ requestLog: { maxRows: 20, maxRowsPerAccount: 10 } });
    try {
      const accountOf = async () => {
        const a = await accountWithSites(small, 'enterprise', 1);
        return { site: a.sites[0]!, key: a.key, id: a.id };
      };
      const quiet = await accountOf();
      const busy = await accountOf();
      expect((await quiet.site.get('sites/status', { headers: { 'X-Request-Id': 'quiet-1' } })).status).toBe(200);
      // The busy account's own signed requests, more than the whole log keeps.
      for (let i = 0; i < 30; i++) await busy.site.get('sites/status');
      await small.svc.ctx.requestLog.flush();
      await small.svc.ctx.requestLog.prune(new Date());
      const r = await rawRequest(`${small.gateway}/enterprise/logs`, 'GET', { Authorization: `Bearer ${quiet.key}` });
      const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
      expect(text).toContain('"request_id":"quiet-1"');
      const n = await small.svc.ctx.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM request_log WHERE account_id = $1',
        [busy.id],
      );
      expect(n.rows[0]!.n).toBe(10);
      // The table's own cap counts rows (the ids have holes now), keeping the newest.
      expect(await pruneLog(small.svc.ctx.db, new Date(0), 4)).toBe(7);
      const left = await small.svc.ctx.db.query<{ account_id: string }>(
        'SELECT account_id FROM request_log ORDER BY id',
      );
      expect(left.rows.map((x) => x.account_id)).toEqual([busy.id, busy.id, busy.id, busy.id]);
    } finally {
      await small.stop();
    }
  });
});

describe('the update feed and downloads: what a link lets anyone ask for', () => {
  it("count against the site's own rate limit, like its signed requests", async () => {
    const limited = await startHarness({ rateLimits: { perAddress: 0, register: 0, perSite: 4 } });
    try {
      const { sites } = await accountWithSites(limited, 'enterprise', 1);
      // activate used one request of the site; check is the second.
      const check = await sites[0]!.get('updates/check', { query: 'product=zzlimit&version=1.0.0' });
      expect(check.status).toBe(200);
      const feed = `${check.body.feed_url as string}latest-linux.yml`;
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push((await rawRequest(feed, 'GET', {})).status);
      // No release: 404 while the site has requests left, then 429 like any signed request of the site.
      expect(answers.slice(0, 2)).toEqual([404, 404]);
      expect(answers.slice(2)).toEqual([429, 429]);
      expect((await sites[0]!.get('sites/status')).status).toBe(429);
    } finally {
      await limited.stop();
    }
  });
});
