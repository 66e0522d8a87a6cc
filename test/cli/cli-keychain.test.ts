import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { VAULT_SERVICE } from '../../main/contract/paths.ts';
import type { TokenCreated } from '../../main/contract/tokens.ts';
import { ADMIN_KEY_ACCOUNT, clientTokenAccount } from '../../main/store/vault-account.ts';
import { loadKeytar, type KeychainClient } from '../../main/store/vault-keychain.ts';
import { INIT, rawPost } from '../helpers/service.ts';
import {
  expectTokenInNoFile,
  filesContaining,
  removeDir,
  runCli,
  startServe,
  tempDataDir,
  TOKEN_RE,
  type Served,
} from './cli-harness.ts';

// Every step here is a child process loading the CLI through tsx: seconds each on a busy two-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

// `tokens create --keychain ACCOUNT` against a real Secret Service. Run as CI does:
//   HOME=$(mktemp -d) dbus-run-session -- bash .ci/with-keyring.sh npx vitest run test/cli

const run = promisify(execFile);

/** What libsecret itself holds for the account: the Secret Service, not our code, is asked. */
async function secretToolLookup(account: string): Promise<string | null> {
  try {
    const { stdout } = await run('secret-tool', ['lookup', 'service', VAULT_SERVICE, 'account', account]);
    return stdout.replace(/\n$/, '');
  } catch {
    return null;
  }
}

let keytar: KeychainClient;
let adminKeyBefore: string | null = null;
const accounts: string[] = [];
const dirs: string[] = [];
let served: Served | null = null;

const account = (): string => {
  const a = `gatehouse-cli-test-${randomBytes(5).toString('hex')}`;
  accounts.push(a, clientTokenAccount(a));
  return a;
};
const newDir = async (): Promise<string> => {
  const d = await tempDataDir();
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  keytar = await loadKeytar();
  try {
    // The service keeps its admin key here too; restore whatever was there before we ran.
    adminKeyBefore = await keytar.getPassword(VAULT_SERVICE, ADMIN_KEY_ACCOUNT);
  } catch (e) {
    throw new Error(
      `no reachable keychain: run this under dbus-run-session with .ci/with-keyring.sh (${(e as Error).message})`,
      { cause: e },
    );
  }
});
afterAll(async () => {
  await served?.stop('SIGKILL');
  for (const a of accounts) await keytar.deletePassword(VAULT_SERVICE, a).catch(() => false);
  if (adminKeyBefore === null) await keytar.deletePassword(VAULT_SERVICE, ADMIN_KEY_ACCOUNT).catch(() => false);
  else await keytar.setPassword(VAULT_SERVICE, ADMIN_KEY_ACCOUNT, adminKeyBefore);
  for (const d of dirs) await removeDir(d);
});

async function createWithKeychain(dir: string, acct: string, vault: 'keychain' | 'file'): Promise<TokenCreated> {
  const r = await runCli([
    'tokens',
    'create',
    '--label',
    'bridge',
    '--keychain',
    acct,
    '--data-dir',
    dir,
    '--vault',
    vault,
    '--json',
  ]);
  expect(r.code, r.stderr).toBe(0);
  const created = JSON.parse(r.stdout) as TokenCreated;
  expect(created.token).toMatch(TOKEN_RE);
  expect(created.keychain_account).toBe(acct);
  return created;
}

describe('tokens create --keychain (real Secret Service)', () => {
  it('through a running service: the token is in the keychain and in no file of the data dir; it verifies', async () => {
    const dir = await newDir();
    served = await startServe(dir, [], {}, ['--vault', 'keychain']);
    expect(served.info.vault).toMatch(/^keychain \(Secret Service\)$/);
    const acct = account();
    const created = await createWithKeychain(dir, acct, 'keychain');

    // kept in the clients' namespace of the vault, apart from the service's own secrets
    expect(await secretToolLookup(clientTokenAccount(acct))).toBe(created.token);
    expect(await keytar.getPassword(VAULT_SERVICE, clientTokenAccount(acct))).toBe(created.token);
    expect(await secretToolLookup(acct)).toBeNull();
    await expectTokenInNoFile(dir, created.token);
    expect(existsSync(join(dir, 'vault.json'))).toBe(false);
    expect((await rawPost(served.info.mcp_url, INIT, { Authorization: `Bearer ${created.token}` })).status).toBe(200);

    expect(await served.stop('SIGTERM')).toMatchObject({ code: 0 });
    served = null;
    await expectTokenInNoFile(dir, created.token);
  });

  it('without a service (the CLI opens the keychain itself): the same', async () => {
    const dir = await newDir();
    const acct = account();
    const created = await createWithKeychain(dir, acct, 'keychain');
    expect(await secretToolLookup(clientTokenAccount(acct))).toBe(created.token);
    await expectTokenInNoFile(dir, created.token);
    expect(existsSync(join(dir, 'vault.json'))).toBe(false);
  });

  it('with the file vault the client copy lives only in the 0600 vault file, never in the options or audit files', async () => {
    const dir = await newDir();
    const acct = account();
    const created = await createWithKeychain(dir, acct, 'file');
    expect(await secretToolLookup(clientTokenAccount(acct))).toBeNull();
    const vaultFile = join(dir, 'vault.json');
    expect(await filesContaining(dir, created.token)).toEqual([vaultFile]);
    expect((await stat(vaultFile)).mode & 0o777).toBe(0o600);
  });
});
