import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reservationFor } from '../../cloud/ai/ai-router.ts';
import { callProvider } from '../../cloud/ai/providers/call-provider.ts';
import { uuidv7 } from '../../main/lib/ids.ts';
import { createLogger } from '../../main/lib/logger.ts';
import { register, SiteClient, type Answer } from './helpers/client.ts';
import { freshDatabaseUrl, onPostgres, startHarness, TEST_MASTER_KEY, type Harness } from './helpers/cloud-harness.ts';
import { startOpenAiFixture, type FixtureProvider } from '../fixtures/ai-providers/fixture-provider.ts';

/**
 * The ledger: ai/generate and usage/record charging one counter at
 * once (on PostgreSQL through two instances on one database, with the
 * server's own log read for deadlocks), a provider that ignores max_tokens,
 * the nonce folded into the route's own statement, and no provider at all.
 */
let a: Harness;
let b: Harness;
let honest: FixtureProvider;
let greedy: FixtureProvider;
let logText = '';
const logged = new Writable({
  write(chunk, _enc, done) {
    logText += String(chunk);
    done();
  },
});
const pgLog = process.env.GATEHOUSE_PG_LOG;

const sql = async <T>(text: string, params: unknown[] = []): Promise<T[]> =>
  (await a.svc.ctx.db.query<T>(text, params)).rows;

beforeAll(async () => {
  [honest, greedy] = await Promise.all([
    startOpenAiFixture(),
    startOpenAiFixture({ key: 'sk-fixture-greedy-0123456789abcdefghij' }),
  ]);
  const env = { GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY, KEY_HONEST: honest.key, KEY_GREEDY: greedy.key };
  const log = createLogger({ level: 'warn', stream: logged, json: true });
  if (onPostgres) {
    const url = await freshDatabaseUrl();
    [a, b] = await Promise.all([
      startHarness({ databaseUrl: url, env, log }),
      startHarness({ databaseUrl: url, env, log }),
    ]);
  } else {
    a = b = await startHarness({ env, log });
  }
}, 180_000);
afterAll(async () => {
  await a?.stop();
  if (b !== a) await b?.stop();
  await honest?.close();
  await greedy?.close();
});

async function licensedSite(): Promise<SiteClient> {
  const site = await register(a.gateway);
  const lic = await a.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
  expect((await site.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
  return site;
}

/** The honest provider, registered once (tests may run alone). */
async function withHonest(): Promise<void> {
  const list = await a.op<{ providers: Array<{ id: string }> }>('providers.list');
  if (!list.providers.some((p) => p.id === 'honest'))
    await a.op('providers.add', {
      id: 'honest',
      kind: 'openai',
      base_url: honest.baseUrl,
      api_key_env: 'KEY_HONEST',
      models: ['small-1'],
    });
}

const REQ = {
  product: 'verto',
  feature: 'verto.translate',
  messages: [{ role: 'user' as const, content: 'Translate: good morning' }],
  max_tokens: 100,
};

describe('the ledger', () => {
  it('with no provider configured, ai/route and ai/generate answer provider_unavailable and say what the operator does', async () => {
    const site = await licensedSite();
    for (const path of ['ai/route', 'ai/generate']) {
      const r = await site.post(path, REQ);
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toBeDefined();
      expect(r.body.error).toMatchObject({ code: 'provider_unavailable', retryable: true });
      expect(r.body.error.message).toMatch(
        /no AI provider is configured on this gateway: the operator adds one with `gatehouse-cloud providers add/,
      );
      expect(r.body.error.message).not.toMatch(/policy/);
    }
  });

  it('ai/generate and usage/record charging one counter through two instances: no deadlock, every answer recorded once', async () => {
    await withHonest();
    const site = await licensedSite();
    const other = new SiteClient(b.gateway, site.creds);
    // A limit on the site's daily tokens: usage/record's limited counter and the hold's account counters, the pair that deadlocked.
    await a.op('limits.set', {
      scope: 'site',
      subject: site.creds.site_id,
      metric: 'ai_tokens',
      period: 'day',
      limit: 10_000_000,
    });
    const logStart = pgLog ? (await readFile(pgLog, 'utf8')).length : 0;
    const calls = honest.count;
    const answers: Answer[] = [];
    for (let wave = 0; wave < 3; wave++) {
      const clients = [site, other];
      const work = Array.from({ length: 16 }, (_, i) =>
        i % 2
          ? clients[(i >> 1) % 2]!.post('ai/generate', { ...REQ, model: 'small-1' })
          : clients[(i >> 1) % 2]!.post('usage/record', {
              events: Array.from({ length: 5 }, () => ({
                event_id: uuidv7(),
                event: 'mcp.tool.called',
                site_id: site.creds.site_id,
                product: 'mcp',
                feature: 'mcp.core',
                units: 1,
                tokens_input: 7,
                tokens_output: 3,
                timestamp: new Date().toISOString(),
              })),
            }),
      );
      answers.push(...(await Promise.all(work)));
    }
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
    const served = honest.count - calls;
    expect(served).toBe(24);
    const [events] = await sql<{ ai: number; recorded: number; tokens: number }>(
      `SELECT count(*) FILTER (WHERE event = 'ai.generation.completed')::int AS ai, count(*) FILTER (WHERE event = 'mcp.tool.called')::int AS recorded, sum(tokens_input + tokens_output)::int AS tokens FROM usage_events WHERE site_id = $1`,
      [site.creds.site_id],
    );
    expect(events).toMatchObject({ ai: served, recorded: 24 * 5 });
    const [{ account_id }] = (await sql<{ account_id: string }>('SELECT account_id FROM sites WHERE id = $1', [
      site.creds.site_id,
    ])) as [{ account_id: string }];
    const counters = await sql<{ scope: string; period: string; used: number; reserved: number }>(
      `SELECT scope, period, used::int, reserved::int FROM usage_counters WHERE subject IN ($1, $2) AND metric = 'ai_tokens'`,
      [site.creds.site_id, account_id],
    );
    expect(counters).toHaveLength(4);
    for (const c of counters) expect(c).toMatchObject({ used: events!.tokens, reserved: 0 });
    expect(
      await sql(`SELECT id FROM usage_reservations WHERE site_id = $1 AND status = 'held'`, [site.creds.site_id]),
    ).toEqual([]);
    if (onPostgres && pgLog) expect((await readFile(pgLog, 'utf8')).slice(logStart)).not.toMatch(/deadlock detected/);
    if (onPostgres) {
      const [s] = await sql<{ deadlocks: number }>(
        'SELECT deadlocks::int FROM pg_stat_database WHERE datname = current_database()',
      );
      expect(s!.deadlocks).toBe(0);
    }
  }, 120_000);

  it('a provider that ignores max_tokens: 20 generations against a 2,000-token daily limit book no more than the limit plus one hold, recorded as reported, flagged, breaker opened', async () => {
    await a.op('providers.add', {
      id: 'greedy',
      kind: 'openai',
      base_url: greedy.baseUrl,
      api_key_env: 'KEY_GREEDY',
      models: ['greedy-1'],
    });
    greedy.setDefault({
      kind: 'slow',
      delay_ms: 100,
      then: { kind: 'success', text: 'x'.repeat(20_000), usage: { input: 12, output: 5000 } },
    });
    const site = await licensedSite();
    const LIMIT = 2000;
    await b.op('limits.set', {
      scope: 'site',
      subject: site.creds.site_id,
      metric: 'ai_tokens',
      period: 'day',
      limit: LIMIT,
    });
    const req = { ...REQ, model: 'greedy-1' };
    const hold = reservationFor(req);
    const clients = [site, new SiteClient(b.gateway, site.creds)];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => clients[i % 2]!.post('ai/generate', req).then((r) => ({ r, via: i % 2 }))),
    );
    const ok = results.filter((x) => x.r.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    for (const x of results) if (x.r.status !== 200) expect([429, 503]).toContain(x.r.status);
    const [counter] = await sql<{ used: number; reserved: number }>(
      `SELECT used::int, reserved::int FROM usage_counters WHERE scope = 'site' AND subject = $1 AND metric = 'ai_tokens' AND period = 'day'`,
      [site.creds.site_id],
    );
    expect(counter!.reserved).toBe(0);
    expect(counter!.used).toBeLessThanOrEqual(LIMIT + hold);
    // Recorded truthfully: every answer with the 5,000 output tokens the provider reported.
    const [events] = await sql<{ n: number; output: number }>(
      `SELECT count(*)::int AS n, sum(tokens_output)::int AS output FROM usage_events WHERE site_id = $1 AND event = 'ai.generation.completed'`,
      [site.creds.site_id],
    );
    expect(events).toEqual({ n: ok.length, output: 5000 * ok.length });
    // Flagged to the operator: the log, and providers list.
    expect(logText).toMatch(/answered more tokens than it was allowed/);
    const list = await a.op<{
      overshoots: Array<{
        provider: string;
        count: number;
        worst_reported_output: number;
        worst_allowed_output: number;
      }>;
    }>('providers.list');
    expect(list.overshoots).toEqual([
      expect.objectContaining({
        provider: 'greedy',
        count: ok.length,
        worst_reported_output: 5000,
        worst_allowed_output: 100,
      }),
    ]);
    // Its breaker opened on every instance that saw it: the next generation there does not reach it.
    const calls = greedy.count;
    for (const via of new Set(ok.map((x) => x.via))) {
      const again = await clients[via]!.post('ai/generate', req);
      expect(again.status).toBe(503);
      expect(again.body.error.code).toBe('provider_unavailable');
    }
    expect(greedy.count).toBe(calls);
  }, 120_000);

  it('with provider streaming, the gateway stops reading at max_tokens and reports what it counted', async () => {
    greedy.script({ kind: 'success', text: 'word '.repeat(400), chunks: 200, usage: { input: 5, output: 2000 } });
    const out = await callProvider(
      { id: 'greedy', kind: 'openai', base_url: greedy.baseUrl, api_key_env: 'K' },
      { model: 'greedy-1', messages: REQ.messages, max_tokens: 20, stream: true },
      { env: { K: greedy.key } },
    );
    expect(out).toMatchObject({ ok: true, overran: true });
    if (!out.ok) return;
    expect(out.tokens_output).toBeGreaterThan(20);
    expect(out.text.length).toBeLessThan(2000);
    expect(out.text.length).toBeGreaterThan(0);
  });

  it('ai/generate and usage/record claim the nonce in their own statement: a replay is refused, also of a request refused before it acted', async () => {
    await withHonest();
    const site = await licensedSite();
    const nonceOf = (s: string) => Buffer.from(s.padEnd(16, '.').slice(0, 16)).toString('base64url');
    const nonce = nonceOf('ledger-nonce-1');
    const first = await site.post('ai/generate', { ...REQ, model: 'small-1' }, { nonce });
    expect(first.status).toBe(200);
    const replay = await site.post('ai/generate', { ...REQ, model: 'small-1' }, { nonce });
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe('signature_invalid');

    // Refused before any hold (the feature is unknown): the nonce is spent all the same.
    const refusedNonce = nonceOf('ledger-nonce-2');
    expect((await site.post('ai/generate', { ...REQ, feature: 'no.such' }, { nonce: refusedNonce })).status).toBe(400);
    expect(
      (await site.post('ai/generate', { ...REQ, model: 'small-1' }, { nonce: refusedNonce })).body.error.code,
    ).toBe('signature_invalid');

    const ev = {
      event_id: uuidv7(),
      event: 'mcp.tool.called',
      site_id: site.creds.site_id,
      product: 'mcp',
      feature: 'mcp.core',
      units: 1,
      timestamp: new Date().toISOString(),
    };
    const recNonce = nonceOf('ledger-nonce-3');
    expect((await site.post('usage/record', ev, { nonce: recNonce, idempotencyKey: 'k-1' })).status).toBe(200);
    const again = await site.post('usage/record', ev, { nonce: recNonce, idempotencyKey: 'k-1' });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('signature_invalid');
    expect(await sql('SELECT 1 FROM usage_events WHERE site_id = $1', [site.creds.site_id])).toHaveLength(2);

    // usage/record refused before its statement (an event from the far future, a body that is not JSON): the nonce
    // is spent all the same, so the signed request cannot be replayed to act later (once the time has come).
    const early = { ...ev, event_id: uuidv7(), timestamp: new Date(Date.now() + 30 * 86_400_000).toISOString() };
    const earlyNonce = nonceOf('ledger-nonce-4');
    expect((await site.post('usage/record', early, { nonce: earlyNonce, idempotencyKey: 'k-2' })).status).toBe(400);
    const later = await site.post(
      'usage/record',
      { ...early, timestamp: new Date().toISOString() },
      { nonce: earlyNonce, idempotencyKey: 'k-2' },
    );
    expect(later.body.error?.code).toBe('signature_invalid');
    const garbledNonce = nonceOf('ledger-nonce-5');
    expect((await site.call('POST', 'ai/generate', { rawBody: '{"not json', nonce: garbledNonce })).status).toBe(400);
    expect(
      (await site.post('ai/generate', { ...REQ, model: 'small-1' }, { nonce: garbledNonce })).body.error?.code,
    ).toBe('signature_invalid');
    expect(await sql('SELECT 1 FROM usage_events WHERE site_id = $1', [site.creds.site_id])).toHaveLength(2);
  });
});
