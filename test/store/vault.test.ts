import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatehouseError } from '../../main/core/errors.ts';
import type { Vault } from '../../main/core/ports/ports.ts';
import { createLogger } from '../../main/lib/logger.ts';
import { openVault } from '../../main/store/vault.ts';
import type { KeychainClient } from '../../main/store/vault-keychain.ts';
import { runToEnd, spawnFixture } from './fixtures/spawn-fixture.ts';

// Keychain tests talk to a real Secret Service. Run them as CI does:
//   HOME=$(mktemp -d) dbus-run-session -- bash .ci/with-keyring.sh npx vitest run test/store

function capture(): { log: ReturnType<typeof createLogger>; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString('utf8')));
  return { log: createLogger({ stream, json: true, level: 'debug' }), text: () => text };
}

const secret = (): string => `gth_${randomBytes(32).toString('base64url')}`;

let dir: string;
const accounts: string[] = [];
let keychain: Vault | null = null;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-vault-'));
});
afterEach(async () => {
  // Leave nothing behind in the keyring, even when a test failed half way.
  if (keychain) for (const a of accounts.splice(0)) await keychain.delete(a).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});
afterAll(() => {
  keychain = null;
});

/** The behaviour both backends share, run against each. */
function behavesLikeAVault(open: () => Promise<Vault>): void {
  it('sets, gets, overwrites and deletes; a missing account reads as null', async () => {
    const v = await open();
    const account = `test-${randomBytes(6).toString('hex')}`;
    accounts.push(account);
    const first = secret();
    const second = secret();

    expect(await v.get(account)).toBeNull();
    await v.set(account, first);
    expect(await v.get(account)).toBe(first);
    await v.set(account, second);
    expect(await v.get(account)).toBe(second);
    expect(await v.delete(account)).toBe(true);
    expect(await v.get(account)).toBeNull();
    expect(await v.delete(account)).toBe(false);
  });

  it('keeps accounts apart, including odd but valid names', async () => {
    const v = await open();
    const names = [`a-${randomBytes(4).toString('hex')}`, `b ü/ß:@${randomBytes(4).toString('hex')}`, '__proto__'];
    accounts.push(...names);
    const values = names.map(() => secret());
    for (const [i, n] of names.entries()) await v.set(n, values[i] as string);
    for (const [i, n] of names.entries()) expect(await v.get(n)).toBe(values[i]);
    expect(await v.get('constructor')).toBeNull();
  });

  it('rejects bad account names and secrets with invalid_value, never echoing the secret', async () => {
    const v = await open();
    const s = secret();
    for (const bad of ['', 'x'.repeat(201), 'line\nbreak']) {
      const err = await v.set(bad, s).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GatehouseError);
      expect((err as GatehouseError).code).toBe('invalid_value');
      expect((err as GatehouseError).message).not.toContain(s);
    }
    await expect(v.get('x'.repeat(200))).resolves.toBeNull();
    await expect(v.set('ok-account', '')).rejects.toMatchObject({ code: 'invalid_value' });
  });
}

describe('vault: keychain (real Secret Service)', () => {
  beforeEach(async () => {
    keychain ??= await openVault({ dataDir: dir, backend: 'keychain', log: capture().log }).catch((e: unknown) => {
      throw new Error(
        `no reachable keychain: run this under dbus-run-session with .ci/with-keyring.sh (${(e as Error).message})`,
      );
    });
  });

  behavesLikeAVault(async () => {
    const v = await openVault({ dataDir: dir, backend: 'keychain', log: capture().log });
    expect(v.backend).toBe('keychain');
    expect(v.label).toMatch(/^keychain \(.+\)$/);
    return v;
  });

  it('auto picks the keychain when it answers, writes no vault file and warns nothing', async () => {
    const { log, text } = capture();
    const v = await openVault({ dataDir: dir, log });
    expect(v.backend).toBe('keychain');
    expect(await readdir(dir)).toEqual([]);
    expect(text()).toBe('');
  });
});

describe('vault: file backend', () => {
  behavesLikeAVault(async () => {
    const v = await openVault({ dataDir: dir, backend: 'file', log: capture().log });
    expect(v.backend).toBe('file');
    expect(v.label).toBe('file (not encrypted)');
    return v;
  });

  it('keeps vault.json at 0600 from the first byte and never logs the secret', async () => {
    const { log, text } = capture();
    const v = await openVault({ dataDir: join(dir, 'data'), backend: 'file', log });
    const s = secret();
    await v.set('admin', s);
    const file = join(dir, 'data', 'vault.json');
    if (process.platform !== 'win32') {
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir, 'data'))).mode & 0o777).toBe(0o700);
    }
    expect(await readFile(file, 'utf8')).toContain(s);
    await v.delete('admin');
    expect(text()).not.toContain(s);
  });

  it('tightens a vault file someone made readable by others', async () => {
    if (process.platform === 'win32') return;
    await writeFile(join(dir, 'vault.json'), JSON.stringify({ version: 1, secrets: { a: 'b'.repeat(10) } }), {
      mode: 0o644,
    });
    const { log, text } = capture();
    const v = await openVault({ dataDir: dir, backend: 'file', log });
    expect((await stat(join(dir, 'vault.json'))).mode & 0o777).toBe(0o600);
    expect(await v.get('a')).toBe('b'.repeat(10));
    expect(text()).toContain('0600');
    expect(text()).not.toContain('bbbbbbbbbb');
  });

  it('sees changes made by another vault instance (another process) at once', async () => {
    const a = await openVault({ dataDir: dir, backend: 'file', log: capture().log });
    const b = await openVault({ dataDir: dir, backend: 'file', log: capture().log });
    const s = secret();
    await a.set('shared', s);
    expect(await b.get('shared')).toBe(s);
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).set(`k${i}`, `v${i}`)));
    for (let i = 0; i < 20; i++) expect(await a.get(`k${i}`)).toBe(`v${i}`);
  });

  it('loses no secret when two processes write the file vault at the same time', async () => {
    const writers = ['p', 'q'].map((prefix) => runToEnd(spawnFixture('vault-writer.ts', [dir, prefix, '40'])));
    const results = await Promise.all(writers);
    for (const r of results) expect(r.stdout, r.stderr).toBe('done\n');
    const v = await openVault({ dataDir: dir, backend: 'file', log: capture().log });
    for (const prefix of ['p', 'q'])
      for (let i = 0; i < 40; i++) expect(await v.get(`${prefix}-${i}`)).toBe(`secret-${prefix}-${i}`);
    expect((await readdir(dir)).sort()).toEqual(['vault.json']);
  }, 120_000); // ceiling for two Node start-ups and 80 locked writes on a busy machine

  it('moves a corrupt vault file aside, logs it without its content, and starts empty', async () => {
    const leaked = secret();
    await writeFile(join(dir, 'vault.json'), `{"version":1,"secrets":{"admin":"${leaked}"`, { mode: 0o600 });
    const { log, text } = capture();
    const v = await openVault({ dataDir: dir, backend: 'file', log });
    expect(await v.get('admin')).toBeNull();
    const backups = (await readdir(dir)).filter((n) => n.startsWith('vault.json.corrupt-'));
    expect(backups).toHaveLength(1);
    expect(await readFile(join(dir, backups[0] as string), 'utf8')).toContain(leaked);
    expect(text()).toContain('"level":"error"');
    expect(text()).not.toContain(leaked);
  });
});

describe('vault: choosing a backend', () => {
  it('auto falls back to the file, with one warning, when no Secret Service is reachable (real child process)', async () => {
    const s = secret();
    const child = spawnFixture('vault-open.ts', [dir, 'auto', 'bridge-token', s], {
      ...process.env,
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'no-such-bus')}`,
    });
    const { stdout, stderr } = await runToEnd(child);
    expect(JSON.parse(stdout)).toEqual({ ok: true, backend: 'file', label: 'file (not encrypted)', roundTrip: true });
    const warnings = stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(warnings.filter((w) => w.level === 'warn' && w.msg.startsWith('vault: file (not encrypted)'))).toHaveLength(
      1,
    );
    expect(stderr).not.toContain(s);
    expect((await stat(join(dir, 'vault.json'))).mode & 0o777).toBe(
      process.platform === 'win32' ? expect.any(Number) : 0o600,
    );
  });

  it('forced keychain with no reachable Secret Service fails with vault_unavailable (real child process)', async () => {
    const s = secret();
    const child = spawnFixture('vault-open.ts', [dir, 'keychain', 'bridge-token', s], {
      ...process.env,
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'no-such-bus')}`,
    });
    const { stdout, stderr } = await runToEnd(child);
    const out = JSON.parse(stdout) as { ok: boolean; code: string; message: string };
    expect(out).toMatchObject({ ok: false, code: 'vault_unavailable' });
    expect(out.message).toMatch(/not reachable/);
    expect(stdout + stderr).not.toContain(s);
    expect(await readdir(dir)).toEqual([]);
  });

  it('auto falls back when the keychain hangs (probe timeout) or keytar cannot load', async () => {
    const hanging: KeychainClient = {
      getPassword: () => new Promise(() => undefined),
      setPassword: () => new Promise(() => undefined),
      deletePassword: () => new Promise(() => undefined),
    };
    const a = capture();
    const v1 = await openVault({
      dataDir: join(dir, 'a'),
      log: a.log,
      loadKeychain: async () => hanging,
      probeTimeoutMs: 100,
    });
    expect(v1.backend).toBe('file');
    expect(a.text()).toMatch(/no answer to a read within 0\.1 s/);

    const b = capture();
    const v2 = await openVault({
      dataDir: join(dir, 'b'),
      log: b.log,
      loadKeychain: async () => {
        throw new Error('Cannot find module keytar.node');
      },
    });
    expect(v2.label).toBe('file (not encrypted)');
    expect(b.text()).toMatch(/keytar could not be loaded/);

    await expect(
      openVault({
        dataDir: join(dir, 'c'),
        backend: 'keychain',
        loadKeychain: async () => hanging,
        probeTimeoutMs: 100,
      }),
    ).rejects.toMatchObject({
      code: 'vault_unavailable',
    });
  });

  it('auto refuses a Secret Service that answers reads but cannot store (no unlocked collection)', async () => {
    const readOnly: KeychainClient = {
      getPassword: async () => null,
      setPassword: async () => {
        throw new Error('Object does not exist at path “/org/freedesktop/secrets/collection/login”');
      },
      deletePassword: async () => false,
    };
    const { log, text } = capture();
    const v = await openVault({ dataDir: dir, log, loadKeychain: async () => readOnly });
    expect(v.backend).toBe('file');
    expect(text()).toContain('collection/login');
  });
});
