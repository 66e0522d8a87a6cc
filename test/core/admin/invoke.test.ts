import { beforeEach, describe, expect, it } from 'vitest';
import {
  ALL_ACTIONS,
  API_ACTIONS,
  PRINCIPALS,
  consoleSession,
  type AnyAction,
  type Principal,
} from '../../../main/contract/index.ts';
import { ADMIN_KEY_ACCOUNT } from '../../../main/store/vault-account.ts';
import { openCore, type Core } from '../../helpers/core.ts';

// invoke (main/core/admin/invoke.ts) over the real core on in-memory stores: who may
// call, then the input, then the handler — the same answers for every surface.

let core: Core;
beforeEach(async () => {
  core = await openCore();
});

const people: Principal[] = [
  PRINCIPALS.appConsole,
  PRINCIPALS.tray,
  PRINCIPALS.cliViaService,
  PRINCIPALS.cliDirect,
  consoleSession('ses_0123456789ab'),
];

/** Stage a page title change as an MCP client of `tokenId` would. */
async function stage(tokenId: string, title = 'Staged title'): Promise<string> {
  const out = await core.pipeline.call('pages_update', { id: 1, title }, core.ctxOf(tokenId));
  if (out.kind !== 'result') throw new Error(`not staged: ${out.message}`);
  return (out.output.structured as { staged_id: string }).staged_id;
}

describe('invoke: who may call', () => {
  it('answers an unknown action name (including prototype keys) with not_found, for anyone', async () => {
    for (const name of ['nope', '__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const r = await core.invoke(name as AnyAction, {}, PRINCIPALS.appConsole);
      expect(r, name).toMatchObject({ ok: false, code: 'not_found' });
    }
  });

  it('lets every person surface call the console actions', async () => {
    for (const p of people) {
      const r = await core.invoke('settings.get', {}, p);
      expect(r.ok, JSON.stringify(p)).toBe(true);
    }
  });

  it("refuses every admin action to a client token, even an administrator's, before looking at the input", async () => {
    const { record } = await core.tokenFor('ops', 'administrator');
    const token = core.restPrincipal(record.id);
    const adminActions = ALL_ACTIONS.filter((a) => !('token' in API_ACTIONS[a].who));
    expect(adminActions).toContain('tokens.create');
    for (const action of adminActions) {
      // a bad input too: a token must learn nothing from the schema and cause no work
      for (const input of [{}, { bogus: '\u0000'.repeat(10) }]) {
        const r = await core.invoke(action, input, token);
        expect(r, action).toMatchObject({ ok: false, code: 'forbidden' });
        expect(!r.ok && r.message).toContain('MCP client tokens are for the MCP endpoint only');
      }
    }
    expect(core.settings.get().approval_mode).toBe('admin');
    expect(core.tokens.list()).toHaveLength(1);
  });

  it('lets read-only local REST accept an un-narrowed manage_options token, and nothing narrower or lower', async () => {
    const full = await core.tokenFor('ops', 'administrator');
    const readOnly = await core.tokenFor('ops', 'administrator', { read_only: true });
    const narrowed = await core.tokenFor('ops', 'administrator', { tools: ['pages_get'] });
    const byPlugin = await core.tokenFor('ops', 'administrator', { plugins: ['site'] });
    const editor = await core.tokenFor('ed', 'editor');
    const subscriber = await core.tokenFor('sub', 'subscriber');
    for (const action of ['pro.cloudStatus', 'pro.license', 'pro.entitlements', 'pro.usage'] as const) {
      expect((await core.invoke(action, {}, core.restPrincipal(full.record.id))).ok, action).toBe(true);
      expect((await core.invoke(action, {}, core.restPrincipal(readOnly.record.id))).ok, action).toBe(true);
      for (const t of [narrowed, byPlugin, editor, subscriber]) {
        expect(
          await core.invoke(action, {}, core.restPrincipal(t.record.id)),
          `${action} ${t.user.role}`,
        ).toMatchObject({ ok: false, code: 'forbidden' });
      }
    }
    // state-changing local REST is for people only
    expect(await core.invoke('pro.licenseActivate', {}, core.restPrincipal(full.record.id))).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
    expect(
      await core.invoke('pro.licenseActivate', { license_key: `ghl_${'A'.repeat(32)}` }, PRINCIPALS.appConsole),
    ).toMatchObject({ ok: false, code: 'gateway_unavailable', details: { retry_after: 3600 } });
  });

  it('checks a token as it is now: revoked or demoted since its principal was built', async () => {
    const t = await core.tokenFor('ops', 'administrator');
    const p = core.restPrincipal(t.record.id);
    await core.users.setRole('ops', 'editor');
    expect(await core.invoke('pro.license', {}, p)).toMatchObject({ ok: false, code: 'forbidden' });
    await core.tokens.revoke(t.record.id);
    expect(await core.invoke('pro.license', {}, p)).toMatchObject({ ok: false, code: 'unauthorized' });
  });

  it('refuses background jobs and legacy labels as callers', async () => {
    expect(await core.invoke('settings.get', {}, PRINCIPALS.stagedExpiry)).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
    expect(await core.invoke('settings.get', {}, { kind: 'legacy', label: 'admin' })).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
  });

  it('gives login links to the CLI only, and only while a service listens', async () => {
    expect(await core.invoke('console.loginLink', {}, PRINCIPALS.appConsole)).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
    expect(await core.invoke('console.loginLink', {}, consoleSession('ses_0123456789ab'))).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
    const link = await core.invoke('console.loginLink', {}, PRINCIPALS.cliViaService);
    expect(link.ok && link.data.url).toMatch(/^http:\/\/127\.0\.0\.1:7823\/console\/login\?code=[\w-]{32}$/);
    const code = new URL(link.ok ? link.data.url : 'x:').searchParams.get('code')!;
    expect(core.sessions.redeem(code)).not.toBeNull();
    expect(core.sessions.redeem(code)).toBeNull();
    const offline = await openCore({ consoleUrl: null });
    expect(await offline.invoke('console.loginLink', {}, PRINCIPALS.cliDirect)).toMatchObject({
      ok: false,
      code: 'service_unavailable',
    });
  });

  it('ends only the calling console session on logout', async () => {
    const a = core.sessions.redeem(core.sessions.issueLoginCode())!;
    const b = core.sessions.redeem(core.sessions.issueLoginCode())!;
    expect(await core.invoke('console.logout', {}, consoleSession(a.public_id))).toEqual({
      ok: true,
      data: { ended: true },
    });
    expect(core.sessions.check(a.sid)).toBeNull();
    expect(core.sessions.check(b.sid)).toBe(b.public_id);
    expect(await core.invoke('console.logout', {}, PRINCIPALS.cliViaService)).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
  });
});

describe('invoke: the input', () => {
  it('answers a bad input with invalid_value, the action and field in the message, every issue in details', async () => {
    const r = await core.invoke(
      'settings.update',
      { rate_limit: 'lots', approval_mode: 'robot' },
      PRINCIPALS.appConsole,
    );
    expect(r).toMatchObject({ ok: false, code: 'invalid_value' });
    if (r.ok) return;
    expect(r.message).toMatch(/^settings\.update: rate_limit: /);
    expect((r.details as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toEqual([
      'rate_limit',
      'approval_mode',
    ]);
    expect(core.settings.get().rate_limit).toBe(1200);
  });

  it('gives the same answer to every person surface for the same bad input', async () => {
    const inputs: Array<[AnyAction, unknown]> = [
      ['users.add', { login: 'Bad Login!', role: 'editor' }],
      ['tokens.create', { label: 'x', keychain_account: 'admin-api-key/../x' }],
      ['staged.confirm', { id: 'x', extra: true }],
      ['health.get', 'not an object'],
      ['audit.query', { limit: 100_000 }],
    ];
    for (const [action, input] of inputs) {
      const answers = await Promise.all(people.map((p) => core.invoke(action, input, p)));
      expect(answers[0], action).toMatchObject({ ok: false, code: 'invalid_value' });
      for (const a of answers) expect(a).toEqual(answers[0]);
    }
  });

  it('bounds what a token scope may name', async () => {
    const r = await core.invoke(
      'tokens.create',
      { label: 'wide', scope: { tools: Array.from({ length: 501 }, (_, i) => `t${i}`) } },
      PRINCIPALS.appConsole,
    );
    expect(r).toMatchObject({ ok: false, code: 'invalid_value' });
    const long = await core.invoke(
      'tokens.create',
      { label: 'long', scope: { tools: ['x'.repeat(129)] } },
      PRINCIPALS.appConsole,
    );
    expect(long).toMatchObject({ ok: false, code: 'invalid_value' });
  });
});

describe('invoke: decisions record their principal', () => {
  it("a person's confirm and discard carry the principal into decided_by and the audit entry", async () => {
    const agent = await core.tokenFor('writer', 'editor');
    const first = await stage(agent.record.id, 'First');
    const second = await stage(agent.record.id, 'Second');
    const session = consoleSession('ses_a1b2c3d4e5f6');
    const confirmed = await core.invoke('staged.confirm', { id: first }, session, { request_id: 'req-console-1' });
    expect(confirmed.ok && confirmed.data).toMatchObject({ status: 'confirmed', decided_by: session });
    const discarded = await core.invoke('staged.discard', { id: second }, PRINCIPALS.cliDirect);
    expect(discarded.ok && discarded.data).toMatchObject({ status: 'discarded', decided_by: PRINCIPALS.cliDirect });
    const byResult = (r: string) => core.audit.entries.filter((e) => e.result === r);
    expect(byResult('confirmed')).toEqual([
      expect.objectContaining({
        staged_id: first,
        principal: session,
        request_id: 'req-console-1',
        user_id: agent.user.id,
      }),
    ]);
    expect(byResult('discarded')).toEqual([
      expect.objectContaining({ staged_id: second, principal: PRINCIPALS.cliDirect }),
    ]);
    // the staging entries name the agent's token as theirs
    expect(byResult('staged').map((e) => e.principal)).toEqual(
      [core.restPrincipal(agent.record.id), core.restPrincipal(agent.record.id)].map((p) => ({ ...p, surface: 'mcp' })),
    );
  });

  it("an expiry is recorded as the service's own doing", async () => {
    const agent = await core.tokenFor('writer', 'editor');
    const id = await stage(agent.record.id);
    core.clock.advance(16 * 60_000);
    await core.staging.sweep();
    expect(core.staging.get(id)).toMatchObject({ status: 'expired', decided_by: PRINCIPALS.stagedExpiry });
    expect(core.audit.entries.find((e) => e.result === 'expired')?.principal).toEqual(PRINCIPALS.stagedExpiry);
  });
});

describe('tokens.create with a keychain account', () => {
  it("saves into the clients' namespace of the vault, so no name reaches the admin key", async () => {
    await core.vault.set(ADMIN_KEY_ACCOUNT, 'gha_the-real-admin-key');
    const r = await core.invoke(
      'tokens.create',
      { label: 'sneaky', keychain_account: ADMIN_KEY_ACCOUNT },
      PRINCIPALS.appConsole,
    );
    expect(r.ok).toBe(true);
    expect(core.vault.accounts.get(ADMIN_KEY_ACCOUNT)).toBe('gha_the-real-admin-key');
    expect(core.vault.accounts.get(`client-token/${ADMIN_KEY_ACCOUNT}`)).toBe(r.ok ? r.data.token : 'x');
    expect([...core.vault.accounts.keys()].sort()).toEqual([ADMIN_KEY_ACCOUNT, `client-token/${ADMIN_KEY_ACCOUNT}`]);
  });

  it('refuses names that could step out of the namespace or fool a terminal', async () => {
    for (const name of ['../admin-api-key', 'a/b', '', ' x', 'x\u001b[2J', 'x'.repeat(101), '.hidden']) {
      const r = await core.invoke('tokens.create', { label: 'x', keychain_account: name }, PRINCIPALS.appConsole);
      expect(r, JSON.stringify(name)).toMatchObject({ ok: false, code: 'invalid_value' });
    }
    expect(core.vault.accounts.size).toBe(0);
    expect(core.tokens.list()).toHaveLength(0);
  });
});
