import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../main/lib/logger.ts';
import { openVault } from '../../main/store/vault.ts';
import { ADMIN_KEY_ACCOUNT, clientTokenAccount } from '../../main/store/vault-account.ts';
import { startTestService } from '../helpers/service.ts';
import { type BridgedClient, bridgedClient, INITIALIZE, rawBridge } from './helpers/bridge-client.ts';
import { ensureBundle } from './helpers/bundle.ts';

// The bridge in front of the Gatehouse endpoint itself: found through
// runtime.json (no --url), the token read from the vault the service saved
// it to, and the endpoint's refusals turned into messages a person can act on.
// The keychain run needs a Secret Service (CI provides one); the file-vault
// run goes through the same code everywhere.

const text = (r: { content?: unknown }) => (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');

async function keychainReachable(): Promise<boolean> {
  const dir = await mkdtemp(join(tmpdir(), 'gh-bridge-probe-'));
  try {
    await openVault({ dataDir: dir, backend: 'keychain', log: silentLogger });
    return true;
  } catch {
    return false;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

beforeAll(ensureBundle);
const hasKeychain = await keychainReachable();

describe.each([
  { vault: 'keychain' as const, skip: !hasKeychain },
  { vault: 'file' as const, skip: false },
])('gatehouse-bridge -> the Gatehouse endpoint, token in the $vault vault', ({ vault, skip }) => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let dataDir: string;
  let account: string;
  const legacyAccount = `bridge-legacy-${randomUUID()}`;
  let tokenId: string;
  let token: string;
  const clients: BridgedClient[] = [];
  const bridge = async (extra: Parameters<typeof bridgedClient>[1] = {}) => {
    const c = await bridgedClient(['--data-dir', dataDir, '--token-keychain', account, '--vault', vault], extra);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    if (skip) return;
    svc = await startTestService({ vault });
    dataDir = svc.dataDir;
    account = `bridge-test-${randomUUID()}`;
    const created = await svc.createToken({ label: 'bridge test', keychain_account: account });
    tokenId = created.record.id;
    token = created.token;
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    if (!svc) return;
    for (const a of [clientTokenAccount(account), legacyAccount]) await svc.core.vault.delete(a).catch(() => undefined);
    await svc.cleanup();
  });

  it.skipIf(skip)('finds the service through runtime.json and authenticates with the saved token', async () => {
    const { client, stderr } = await bridge();
    expect(client.getInstructions()).toContain('Gatehouse operating manual');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['site_identity', 'pages_list']));
    const res = await client.callTool({ name: 'pages_list', arguments: { per_page: 2 } });
    expect(res.isError).toBeFalsy();
    expect((res.structuredContent as { pages: unknown[] }).pages).toHaveLength(2);
    const manual = await client.readResource({ uri: 'gatehouse://manual' });
    expect(text({ content: manual.contents })).toContain('staged');
    expect(stderr()).not.toContain(token);
  });

  it.skipIf(skip)(
    'speaks the 2026-07-28 revision through the bridge too (per-request headers from the body)',
    async () => {
      const { client } = await bridge({ clientOptions: { versionNegotiation: { mode: { pin: '2026-07-28' } } } });
      const res = await client.callTool({ name: 'site_identity', arguments: {} });
      expect(res.isError).toBeFalsy();
    },
  );

  it.skipIf(skip)(
    'a stdio client hears tools/list_changed through the bridge (the GET stream) when approval_mode changes its tools',
    async () => {
      const lists: string[][] = [];
      const open = svc.notificationChannels();
      const { client } = await bridge({
        clientOptions: {
          capabilities: {},
          listChanged: {
            tools: {
              debounceMs: 0,
              onChanged: (error, tools) => void (!error && tools && lists.push(tools.map((t) => t.name))),
            },
          },
        },
      });
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('staged_writes_confirm');
      const deadline = Date.now() + 15_000;
      while (svc.notificationChannels() === open && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect((await svc.dispatch('settings.update', { approval_mode: 'agent' })).ok).toBe(true);
      try {
        while (!lists.some((names) => names.includes('staged_writes_confirm')) && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 20));
        expect(lists.at(-1)).toContain('staged_writes_confirm');
      } finally {
        expect((await svc.dispatch('settings.update', { approval_mode: 'admin' })).ok).toBe(true);
      }
    },
  );

  it.skipIf(skip)('gateway switched off -> "switched off in Gatehouse settings"; on again -> works', async () => {
    const { client, stderr } = await bridge();
    expect((await svc.dispatch('settings.update', { enabled: false })).ok).toBe(true);
    try {
      await expect(client.callTool({ name: 'site_identity', arguments: {} })).rejects.toMatchObject({
        code: -32010,
        message: expect.stringContaining('the gateway is switched off in Gatehouse settings'),
      });
      expect(stderr()).toContain('the gateway is switched off in Gatehouse settings');
    } finally {
      expect((await svc.dispatch('settings.update', { enabled: true })).ok).toBe(true);
    }
    expect((await client.callTool({ name: 'site_identity', arguments: {} })).isError).toBeFalsy();
  });

  it.skipIf(skip)('finds a token saved under the bare account name before accounts were namespaced', async () => {
    const old = await svc.createToken({ label: 'saved by an older Gatehouse' });
    await svc.core.vault.set(legacyAccount, old.token);
    const c = await bridgedClient(['--data-dir', dataDir, '--token-keychain', legacyAccount, '--vault', vault]);
    clients.push(c);
    expect((await c.client.callTool({ name: 'site_identity', arguments: {} })).isError).toBeFalsy();
  });

  it.skipIf(skip)(
    "never reads one of the service's own accounts as a client token (the admin key stays home)",
    async () => {
      expect(await svc.core.vault.get(ADMIN_KEY_ACCOUNT)).toMatch(/^gha_/);
      const raw = rawBridge(['--data-dir', dataDir, '--token-keychain', ADMIN_KEY_ACCOUNT, '--vault', vault]);
      raw.send(INITIALIZE);
      expect((await raw.exit()).code).toBe(3);
      expect(raw.stderr()).toContain(`--token-keychain ${ADMIN_KEY_ACCOUNT}: no token is stored under that account`);
    },
  );

  it.skipIf(skip)('exits 3 with how to create one when nothing is stored under the account', async () => {
    const raw = rawBridge(['--data-dir', dataDir, '--token-keychain', 'nobody-saved-this', '--vault', vault]);
    raw.send(INITIALIZE);
    const exit = await raw.exit();
    expect(exit.code).toBe(3);
    // It names where it looked: a service with another data dir or vault keeps its tokens elsewhere.
    const where = vault === 'file' ? `the file vault of the data dir ${dataDir}` : `the keychain`;
    const why = new RegExp(
      `^--token-keychain nobody-saved-this: no token is stored under that account in ${escape(where)}.*; create one with \`gatehouse tokens create --keychain nobody-saved-this --data-dir ${escape(dataDir)}\``,
    );
    expect(raw.stderr()).toMatch(new RegExp(why.source.slice(1), 'm'));
    // The client's initialize, already waiting for the token, is answered with the same reason.
    const answer = JSON.parse(raw.stdout()) as {
      id: number;
      error: { code: number; message: string; data: { code: string } };
    };
    expect(answer).toMatchObject({ id: 0, error: { code: -32001, data: { code: 'unauthorized' } } });
    expect(answer.error.message).toMatch(why);
  });

  it.skipIf(skip)(
    'revoked token -> "token unknown or revoked: create one with `gatehouse tokens create`"',
    async () => {
      const { client, stderr } = await bridge();
      await client.listTools();
      await svc.revokeToken(tokenId);
      await expect(client.callTool({ name: 'site_identity', arguments: {} })).rejects.toMatchObject({
        code: -32001,
        message: expect.stringMatching(/token unknown or revoked: create one with `gatehouse tokens create/),
      });
      expect(
        stderr()
          .split('\n')
          .filter((l) => l.includes('token unknown or revoked')),
      ).toHaveLength(1);
      expect(stderr()).not.toContain(token);
    },
  );
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
