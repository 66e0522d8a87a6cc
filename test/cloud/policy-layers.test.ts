import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyAnswer } from '../../main/contract/cloud/index.ts';
import { layerPolicies } from '../../cloud/domain/policy-layers.ts';
import { uuidv7 } from '../../main/lib/ids.ts';
import { rawRequest, register, type SiteClient } from './helpers/client.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';
import { accountWithSites } from './helpers/accounts.ts';

/**
 * Policy layering: the operator sets an account's policy, the
 * account's own key can only narrow it, in every field: providers, tags,
 * features switched off, limits. Before, `enterprise/policy` wrote the
 * operator's record: an account key could drop the allow-list and switch
 * features back on. And staging identities: capped per license, with a
 * share of the plan's quotas, not the full plan for free.
 */
let h: Harness;
let ent: { id: string; key: string; license: string; sites: SiteClient[] };

const as = (path: string, body?: unknown) =>
  rawRequest(
    `${h.gateway}/${path}`,
    body === undefined ? 'GET' : 'POST',
    { Authorization: `Bearer ${ent.key}` },
    body === undefined ? undefined : JSON.stringify(body),
  );
const providersSeen = async (s: SiteClient) =>
  ((await s.get('ai/providers')).body.providers as Array<{ id: string }>).map((p) => p.id).sort();
const checkFeature = async (s: SiteClient, feature: string) => (await s.post('entitlements/check', { feature })).status;

beforeAll(async () => {
  h = await startHarness();
  for (const [id, tags] of [
    ['eu-one', ['eu']],
    ['eu-two', ['eu', 'approved']],
    ['us-one', ['us']],
  ] as const) {
    await h.op('providers.add', {
      id,
      kind: 'openai',
      base_url: 'http://127.0.0.1:9',
      api_key_env: 'UNUSED_KEY',
      models: ['small-1'],
      tags: [...tags],
    });
  }
  ent = await accountWithSites(h, 'enterprise', 1);
  await h.op('accounts.policy.set', {
    account: ent.id,
    ai_allowed_providers: ['eu-one', 'eu-two'],
    ai_required_tags: ['eu'],
    features_off: ['verto.translate'],
  });
}, 180_000);
afterAll(() => h?.stop());

describe('the account narrows the operator policy, never widens it', () => {
  it('cannot lift the allow-list, add a provider, drop required tags or switch a feature back on', async () => {
    const site = ent.sites[0]!;
    expect(await providersSeen(site)).toEqual(['eu-one', 'eu-two']);
    expect(await checkFeature(site, 'verto.translate')).toBe(403);

    // Lifting the list, dropping the tags and the features off: only the account's own layer changes.
    const lifted = await as('enterprise/policy', {
      ai: { allowed_providers: null, required_tags: [] },
      features_off: [],
    });
    expect(lifted.status).toBe(200);
    expect(PolicyAnswer.safeParse(lifted.body).success).toBe(true);
    expect(lifted.body.policy).toMatchObject({
      ai: { allowed_providers: ['eu-one', 'eu-two'], required_tags: ['eu'] },
      features_off: ['verto.translate'],
      operator: { ai: { allowed_providers: ['eu-one', 'eu-two'] }, features_off: ['verto.translate'] },
    });
    expect(await providersSeen(site)).toEqual(['eu-one', 'eu-two']);
    expect(await checkFeature(site, 'verto.translate')).toBe(403);

    // Naming a provider the operator does not allow is refused, and changes nothing.
    const wider = await as('enterprise/policy', {
      ai: { allowed_providers: ['eu-one', 'us-one'] },
      features_off: ['seo.analyze'],
    });
    expect(wider.status).toBe(403);
    expect(wider.body.error).toMatchObject({ code: 'forbidden', operator_allowed_providers: ['eu-one', 'eu-two'] });
    expect(wider.body.error.message).toMatch(/us-one cannot be added/);
    expect(await providersSeen(site)).toEqual(['eu-one', 'eu-two']);
    expect(await checkFeature(site, 'seo.analyze')).toBe(200);

    // Narrowing works in every field, on top of the operator's.
    const narrow = await as('enterprise/policy', {
      ai: { allowed_providers: ['eu-two'], required_tags: ['approved'], fallback_order: ['eu-two'] },
      features_off: ['seo.analyze'],
    });
    expect(narrow.status).toBe(200);
    expect(narrow.body.policy).toMatchObject({
      ai: { allowed_providers: ['eu-two'], required_tags: ['eu', 'approved'], fallback_order: ['eu-two'] },
    });
    expect([...narrow.body.policy.features_off].sort()).toEqual(['seo.analyze', 'verto.translate']);
    expect(await providersSeen(site)).toEqual(['eu-two']);
    expect(await checkFeature(site, 'seo.analyze')).toBe(403);
    expect(await checkFeature(site, 'verto.translate')).toBe(403);

    // The operator widening its own layer later still leaves the account's narrowing in place.
    const op = await h.op<{ layers: { operator: unknown; account: unknown }; ai_allowed_providers: string[] | null }>(
      'accounts.policy.set',
      { account: ent.id, ai_allowed_providers: null, features_off: [] },
    );
    expect(op.ai_allowed_providers).toEqual(['eu-two']);
    expect(op.layers.account).toMatchObject({ allowed_providers: ['eu-two'], features_off: ['seo.analyze'] });
    expect(await checkFeature(site, 'verto.translate')).toBe(200);
    expect(await checkFeature(site, 'seo.analyze')).toBe(403);
  });

  it("cannot remove or raise the operator's limit with its own", async () => {
    const site = ent.sites[0]!;
    const sid = site.creds.site_id;
    await h.op('limits.set', { scope: 'site', subject: sid, metric: 'reports', period: 'month', limit: 3 });
    expect(
      (await as('enterprise/limits', { scope: 'site', subject: sid, metric: 'reports', period: 'month', limit: 1000 }))
        .status,
    ).toBe(200);
    expect(
      (await as('enterprise/limits', { scope: 'site', subject: sid, metric: 'reports', period: 'month', limit: null }))
        .status,
    ).toBe(200);
    const limits = (await site.get('usage/limits')).body.limits.filter(
      (l: { scope: string; metric: string }) => l.scope === 'site' && l.metric === 'reports',
    );
    expect(limits).toEqual([expect.objectContaining({ limit: 3, source: 'operator' })]);
  });

  it('layers as a pure rule: intersection of providers, union of tags and features', () => {
    expect(
      layerPolicies(
        { allowed_providers: ['a', 'b'], required_tags: ['eu'], features_off: ['x'] },
        { allowed_providers: ['b', 'c'], required_tags: ['ok'], features_off: ['y'] },
      ),
    ).toEqual({
      allowed_providers: ['b'],
      required_tags: ['eu', 'ok'],
      fallback_order: [],
      features_off: ['x', 'y'],
    });
    expect(layerPolicies({}, { allowed_providers: null })).toMatchObject({ allowed_providers: null });
    expect(layerPolicies({ allowed_providers: [] }, { allowed_providers: null })).toMatchObject({
      allowed_providers: [],
    });
  });
});

describe('staging sites', () => {
  it('are capped per license (one per production seat by default) and refused past it with a clear error', async () => {
    const lic = await h.op<{ license_key: string }>('licenses.create', { plan: 'pro', sites: 1 });
    const staged: SiteClient[] = [];
    for (let i = 0; i < 2; i++) staged.push(await register(h.gateway, 'staging'));
    expect((await staged[0]!.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
    const refused = await staged[1]!.post('license/activate', { license_key: lic.license_key });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'site_limit_reached', staging_limit: 1, staging_used: 1 });
    expect(refused.body.error.message).toMatch(/allows 1 staging site and all are in use/);
    // The production seat is still free.
    const prod = await register(h.gateway);
    expect((await prod.post('license/activate', { license_key: lic.license_key })).status).toBe(200);

    // The operator can give a license more.
    const more = await h.op<{ license_key: string }>('licenses.create', { plan: 'pro', sites: 1, staging_sites: 2 });
    expect((await staged[1]!.post('license/activate', { license_key: more.license_key })).status).toBe(200);
    const third = await register(h.gateway, 'staging');
    expect((await third.post('license/activate', { license_key: more.license_key })).status).toBe(200);
    const fourth = await register(h.gateway, 'staging');
    expect((await fourth.post('license/activate', { license_key: more.license_key })).body.error).toMatchObject({
      code: 'site_limit_reached',
      staging_limit: 2,
    });
  });

  it("get a tenth of the plan's per-site limits, counted on their own scope", async () => {
    const lic = await h.op<{ license_key: string }>('licenses.create', { plan: 'free' });
    const stage = await register(h.gateway, 'staging');
    const prod = await register(h.gateway);
    for (const s of [stage, prod])
      expect((await s.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
    const limitOf = async (s: SiteClient) =>
      (await s.get('usage/limits')).body.limits.find(
        (l: { scope: string; metric: string; period: string }) =>
          l.scope === 'site' && l.metric === 'mcp_actions' && l.period === 'day',
      ).limit;
    expect(await limitOf(prod)).toBe(500);
    expect(await limitOf(stage)).toBe(50);
    const event = (units: number) => ({
      event_id: uuidv7(),
      event: 'mcp.tool.called',
      site_id: stage.creds.site_id,
      product: 'mcp',
      feature: 'mcp.core',
      units,
      timestamp: new Date().toISOString(),
    });
    expect((await stage.post('usage/record', event(50))).status).toBe(200);
    expect((await stage.post('usage/record', event(1))).status).toBe(429);
    const cert = JSON.parse(
      Buffer.from((await stage.get('license/status')).body.certificate.payload, 'base64url').toString('utf8'),
    );
    expect(cert.limits).toContainEqual({ scope: 'site', metric: 'mcp_actions', period: 'day', limit: 50 });
  });
});
