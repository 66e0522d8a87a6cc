import { generateKeyPairSync } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BREAKER_BASE_MS, BREAKER_MAX_MS, breakerGate, breakerTrip, CLOSED } from '../../main/cloud-client/breaker.ts';
import { CloudEntitlements } from '../../main/cloud-client/cloud-entitlements.ts';
import { fromAnswer, policyRetries } from '../../main/cloud-client/errors.ts';
import { normalizeGatewayUrl } from '../../main/cloud-client/gateway-url.ts';
import {
  certificateValidity,
  CLOCK_TOLERANCE_MS,
  decide,
  MAX_OFFLINE_MS,
  nextRefreshAt,
  REFRESH_EVERY_MS,
  REFRESH_JITTER_MS,
  retryRefreshAt,
  STALE_WARN_MS,
} from '../../main/cloud-client/grant-policy.ts';
import { OutboxJournal } from '../../main/cloud-client/outbox-journal.ts';
import { fingerprintOf, parsePublicKey } from '../../main/cloud-client/pinned-key.ts';
import { signRequest } from '../../main/cloud-client/request-signing.ts';
import type { CertificatePayload } from '../../main/contract/cloud/certificate.ts';
import { uuidv7 } from '../../main/lib/ids.ts';
import { signHeaders } from '../cloud/helpers/sign.ts';

/** The pure parts of main/cloud, with the edges that the end-to-end tests reach only by chance. */
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('request signing', () => {
  it('matches the independent helper written from docs/cloud-gateway.md byte for byte, query and empty body included', () => {
    const key = { key_id: 'key_abc', secret: 'ghs_' + 's'.repeat(40) };
    for (const [method, url, body] of [
      ['POST', 'http://gateway.example:8443/gateway/v1/entitlements/check', '{"feature":"verto.translate"}'],
      ['GET', 'https://gw.example/gateway/v1/usage/history?period=day&limit=5', ''],
      ['POST', 'http://127.0.0.1:9/gateway/v1/sites/disconnect', ''],
    ] as const) {
      const mine = signRequest(key, {
        method,
        url: new URL(url),
        body: Buffer.from(body),
        created: 1764000000,
        nonce: 'q1w2e3r4t5y6u7i8o9p0aa',
      });
      const theirs = signHeaders(key, { method, url, body, created: 1764000000, nonce: 'q1w2e3r4t5y6u7i8o9p0aa' });
      expect(mine).toEqual(theirs);
    }
  });
});

describe('breaker', () => {
  it('60 s, doubling per trip in a row, at most 10 min, at least what the gateway asked', () => {
    let s = CLOSED;
    const opened: number[] = [];
    for (let i = 0; i < 7; i++) {
      s = breakerTrip(s, 0);
      opened.push(s.open_ms);
    }
    expect(opened).toEqual([60_000, 120_000, 240_000, 480_000, 600_000, 600_000, 600_000]);
    expect(breakerGate(breakerTrip(CLOSED, 1000), 1000 + BREAKER_BASE_MS - 1)).toEqual({
      pass: false,
      retryAt: 1000 + BREAKER_BASE_MS,
    });
    expect(breakerGate(breakerTrip(CLOSED, 1000), 1000 + BREAKER_BASE_MS)).toEqual({ pass: true, probe: true });
    expect(breakerTrip(CLOSED, 0, 90_000).open_until).toBe(90_000);
    expect(breakerTrip(CLOSED, 0, 10 * BREAKER_MAX_MS).open_until).toBe(BREAKER_MAX_MS);
  });
});

describe('retry rules and error mapping', () => {
  it('retries network-like statuses, 429 rate_limited and token_expired (once, counted by the caller), never quota or other 4xx', () => {
    expect(policyRetries(503, 'gateway_unavailable')).toBe(true);
    expect(policyRetries(500, null)).toBe(true);
    expect(policyRetries(408, null)).toBe(true);
    expect(policyRetries(429, 'rate_limited')).toBe(true);
    expect(policyRetries(429, 'quota_exceeded')).toBe(false);
    expect(policyRetries(401, 'token_expired')).toBe(true);
    for (const [s, c] of [
      [401, 'signature_invalid'],
      [403, 'invalid_site'],
      [403, 'entitlement_required'],
      [409, 'site_limit_reached'],
      [400, 'invalid_request'],
      [404, null],
    ] as const)
      expect(policyRetries(s, c)).toBe(false);
  });

  it('keeps the details a caller needs, bounded, without prototype keys; unknown answers get a code from their status', () => {
    const body = JSON.parse(
      '{"success":false,"error":{"code":"quota_exceeded","message":"limit\\u0000 reached ghs_secretsecretsecret","request_id":"x","retryable":false,"scope":"site","reset_at":"2030-01-01T00:00:00Z","__proto__":{"polluted":1},"huge":"' +
        'x'.repeat(20_000) +
        '"}}',
    );
    const e = fromAnswer(429, body, 'req-1', 5000);
    expect(e).toMatchObject({
      code: 'quota_exceeded',
      requestId: 'req-1',
      info: { retryable: false, retryAfterMs: 5000, httpStatus: 429 },
    });
    expect(e.details).toMatchObject({ scope: 'site', reset_at: '2030-01-01T00:00:00Z', request_id: 'req-1' });
    expect(Object.hasOwn(e.details, '__proto__')).toBe(false);
    expect(e.details.huge).toBeUndefined();
    expect(e.message).not.toContain('ghs_secret');
    expect(e.message).not.toContain('\u0000');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(fromAnswer(502, '<html>', 'r', undefined)).toMatchObject({
      code: 'gateway_unavailable',
      info: { retryable: true },
    });
    expect(fromAnswer(429, null, 'r', 1000)).toMatchObject({ code: 'rate_limited', info: { retryable: true } });
    expect(fromAnswer(404, null, 'r', undefined)).toMatchObject({ code: 'not_found', info: { retryable: false } });
    expect(fromAnswer(418, null, 'r', undefined)).toMatchObject({
      code: 'invalid_request',
      info: { retryable: false },
    });
  });
});

describe('gateway URL', () => {
  it('takes the base address with or without /gateway/v1, https or loopback http only', () => {
    expect(normalizeGatewayUrl('https://gw.example.com/gateway/v1/')).toBe('https://gw.example.com');
    expect(normalizeGatewayUrl('https://gw.example.com/vendor/')).toBe('https://gw.example.com/vendor');
    expect(normalizeGatewayUrl('http://[::1]:8787')).toBe('http://[::1]:8787');
    expect(normalizeGatewayUrl('http://localhost:8787/gateway/v1')).toBe('http://localhost:8787');
    for (const bad of [
      'ftp://gw.example',
      'http://gw.example',
      'https://user:pw@gw.example',
      'https://gw.example/?a=1',
      'https://gw.example/#x',
      '',
      'x'.repeat(3000),
      'http://127.0.0.1.evil.example',
    ]) {
      expect(() => normalizeGatewayUrl(bad)).toThrow(/--url/);
    }
  });
});

describe('public key to pin', () => {
  const x = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;
  it('accepts the JWK, the bare key and kid:key, and shows the same fingerprint the operator sees', () => {
    expect(parsePublicKey(JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x, kid: 'ed_1', use: 'sig' }))).toEqual({
      x,
      kid: 'ed_1',
    });
    expect(parsePublicKey(` ${x} `)).toEqual({ x, kid: null });
    expect(parsePublicKey(`ed_2:${x}`)).toEqual({ x, kid: 'ed_2' });
    expect(fingerprintOf(x)).toMatch(/^([0-9a-f]{2}:){31}[0-9a-f]{2}$/);
  });
  it('refuses anything else with a clear message', () => {
    for (const bad of [
      '',
      'abc',
      '{"kty":"RSA"}',
      '{not json',
      `${x}x`,
      'a'.repeat(5000),
      JSON.stringify({ kty: 'OKP', crv: 'X25519', x, kid: 'k', use: 'sig' }),
    ]) {
      expect(() => parsePublicKey(bad)).toThrow(/--public-key/);
    }
  });
});

const cert = (o: Partial<CertificatePayload> & { issued?: number } = {}): CertificatePayload => {
  const issued = o.issued ?? Date.parse('2030-01-10T00:00:00Z');
  return {
    site_id: 's',
    license: { status: 'active', plan: 'pro', key_preview: null, expires_at: null },
    entitlements: [
      { feature: 'verto.translate', allowed: true, plan: 'pro', expires_at: null },
      { feature: 'aeo.reports', allowed: false, plan: 'pro', expires_at: null },
      { feature: 'agency.sites', allowed: false, plan: 'pro', expires_at: null },
    ],
    products: { aeo: 'inactive', code: 'active', verto: 'active', mcp: 'active', pro: 'active' },
    limits: [],
    update: { channel: 'stable', eligible: true },
    issued_at: new Date(issued).toISOString(),
    cert_expires_at: new Date(issued + MAX_OFFLINE_MS).toISOString(),
    ...o,
  };
};

describe('grant policy', () => {
  const p = cert();
  const at = Date.parse(p.issued_at);
  const v = (now: number, highWater = 0) => certificateValidity(p, { now, highWater });
  it('ok, stale after 72 h, expired at the earlier of cert_expires_at and 7 days', () => {
    expect(v(at).reason).toBe('ok');
    expect(v(at + STALE_WARN_MS - 1).reason).toBe('ok');
    expect(v(at + STALE_WARN_MS)).toMatchObject({ usable: true, reason: 'stale' });
    expect(v(at + MAX_OFFLINE_MS - 1).usable).toBe(true);
    expect(v(at + MAX_OFFLINE_MS)).toMatchObject({ usable: false, reason: 'expired' });
    const short = cert({ cert_expires_at: new Date(at + 3600_000).toISOString() });
    expect(certificateValidity(short, { now: at + 3600_000, highWater: 0 }).reason).toBe('expired');
    const long = cert({ cert_expires_at: new Date(at + 30 * 86_400_000).toISOString() });
    expect(certificateValidity(long, { now: at + MAX_OFFLINE_MS, highWater: 0 }).reason).toBe('expired');
  });
  it('a time before issued_at or the high-water mark, beyond a small tolerance, is a clock set back', () => {
    expect(v(at - CLOCK_TOLERANCE_MS + 1).reason).toBe('ok');
    expect(v(at - CLOCK_TOLERANCE_MS - 1).reason).toBe('clock_set_back');
    expect(v(at + 86_400_000, at + 2 * 86_400_000).reason).toBe('clock_set_back');
  });
  it('decides from the certificate, with the refusal code', () => {
    const local = (allowed: boolean) => ({ feature: 'f', allowed, plan: 'free', expires_at: null });
    const ok = v(at);
    expect(decide('verto.translate', p, ok, local(false), at)).toMatchObject({
      source: 'certificate',
      code: null,
      entitlement: { allowed: true },
    });
    expect(decide('aeo.reports', p, ok, local(false), at)).toMatchObject({
      code: 'product_inactive',
      entitlement: { allowed: false, plan: 'pro' },
    });
    expect(decide('agency.sites', p, ok, local(false), at)).toMatchObject({
      code: 'entitlement_required',
      entitlement: { allowed: false, plan: 'agency' },
    });
    expect(decide('not.in.cert', p, ok, local(true), at)).toMatchObject({
      source: 'local',
      entitlement: { allowed: true },
    });
    const expiring = cert({
      entitlements: [
        { feature: 'verto.translate', allowed: true, plan: 'pro', expires_at: new Date(at + 1000).toISOString() },
      ],
    });
    expect(decide('verto.translate', expiring, ok, local(false), at + 1000)).toMatchObject({
      code: 'license_expired',
      entitlement: { allowed: false },
    });
    const revoked = cert({ license: { status: 'invalid', plan: 'pro', key_preview: 'ghl_…AAAA', expires_at: null } });
    expect(
      decide('verto.translate', revoked, certificateValidity(revoked, { now: at, highWater: 0 }), local(false), at),
    ).toMatchObject({ source: 'local', code: 'license_invalid' });
    // no key at all: no license on the site (never activated, or deactivated), the free plan, not a revoked license
    const none = cert({ license: { status: 'invalid', plan: null, key_preview: null, expires_at: null } });
    expect(
      decide('verto.translate', none, certificateValidity(none, { now: at, highWater: 0 }), local(false), at),
    ).toMatchObject({ source: 'local', code: 'entitlement_required' });
  });
  it('refreshes daily, up to 2 h early; after a failure in 5 min, doubling to 1 h', () => {
    expect(nextRefreshAt(0, () => 0)).toBe(REFRESH_EVERY_MS);
    expect(nextRefreshAt(0, () => 0.999)).toBeGreaterThan(REFRESH_EVERY_MS - REFRESH_JITTER_MS);
    expect(retryRefreshAt(0, 1, () => 1)).toBe(5 * 60_000);
    expect(retryRefreshAt(0, 2, () => 1)).toBe(10 * 60_000);
    expect(retryRefreshAt(0, 20, () => 1)).toBe(3600_000);
  });
  it('never looks a name like __proto__ up, and grants nothing for it', async () => {
    const e = new CloudEntitlements({
      clock: { now: () => at },
      certificate: () => ({ kid: 'k', payload: p }),
      offsetMs: () => 0,
      highWaterMs: () => 0,
      observeTime: () => {},
    });
    for (const f of ['__proto__', 'constructor', 'toString', 'x'.repeat(500), 'mcp.core\n'])
      expect((await e.check(f)).allowed).toBe(false);
    expect((await e.check('verto.translate')).allowed).toBe(true);
  });
});

describe('outbox journal', () => {
  const event = () => ({
    event_id: uuidv7(),
    event: 'mcp.tool.called',
    site_id: 's',
    product: 'mcp' as const,
    feature: 'f',
    model: '',
    units: 1,
    tokens_input: 0,
    tokens_output: 0,
    timestamp: new Date().toISOString(),
  });
  it('replays adds and answers in order, skips unreadable lines, ignores answers for unknown ids, compacts to the same state', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-oj-'));
    dirs.push(dir);
    const file = join(dir, 'outbox.jsonl');
    const [a, b, c] = [event(), event(), event()];
    const { journal } = OutboxJournal.open(file);
    journal.append({ a });
    journal.append({ a: b });
    journal.append({ a: c });
    journal.append({ d: [a.event_id, 'unknown'] });
    journal.append({ r: [{ event_id: b.event_id, reason: 'quota_exceeded', message: 'm' }] });
    journal.close();
    appendFileSync(file, 'not json\n{"a":{"event_id":"bad"}}\n');
    const { journal: j2, replayed } = OutboxJournal.open(file);
    expect([...replayed.pending.keys()]).toEqual([c.event_id]);
    expect(replayed.totals).toEqual({ accepted: 1, duplicate: 0, rejected: 1, abandoned: 0 });
    expect(replayed.unreadable).toBe(2);
    j2.compact(replayed.pending.values(), replayed.totals, replayed.recent);
    j2.close();
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    const { journal: j3, replayed: again } = OutboxJournal.open(file);
    j3.close();
    expect([...again.pending.keys()]).toEqual([c.event_id]);
    expect(again.totals).toEqual(replayed.totals);
    expect(again.recent[0]).toMatchObject({ reason: 'quota_exceeded' });
  });
  it('cuts a torn tail off so the next append starts on its own line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-oj-'));
    dirs.push(dir);
    const file = join(dir, 'outbox.jsonl');
    const a = event();
    writeFileSync(file, `${JSON.stringify({ a })}\n{"a":{"eve`);
    const { journal, replayed } = OutboxJournal.open(file);
    expect(replayed.pending.size).toBe(1);
    expect(replayed.unreadable).toBe(0);
    const b = event();
    journal.append({ a: b });
    journal.close();
    const { journal: j2, replayed: r2 } = OutboxJournal.open(file);
    j2.close();
    expect([...r2.pending.keys()]).toEqual([a.event_id, b.event_id]);
  });
});
