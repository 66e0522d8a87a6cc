import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, register } from './helpers/client.ts';
import { onPostgres, TEST_MASTER_KEY } from './helpers/cloud-harness.ts';
import { CLOUD_BIN as BIN, spawnServe } from './helpers/serve-child.ts';
import { inThisProcess } from '../helpers/in-process.ts';

let dataDir: string;
let child: ChildProcess;
let gateway: string;
let serveLog: () => string;
const env = () => ({
  ...process.env,
  GATEHOUSE_CLOUD_DATA_DIR: dataDir,
  GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY,
  DATABASE_URL: '',
});
// Operator commands run in this process (test/helpers/in-process.ts): the same `main` as bin/gatehouse-cloud.mjs
// runs, with this file's environment, without a Node start each. What only a process shows stays a child
// process: the exit status the OS sees (cliChild) and a working directory of its own (cliIn).
const cli = async (...args: string[]) => {
  const r = await inThisProcess(async () => (await import('../../cloud/cli/main.ts')).main(args, env()));
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
};
const cliChild = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args], { env: env(), encoding: 'utf8', timeout: 120_000 });
const cliIn = (cwd: string, ...args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args], { env: env(), encoding: 'utf8', timeout: 120_000, cwd });

beforeAll(async () => {
  if (onPostgres) return;
  dataDir = await mkdtemp(join(tmpdir(), 'gh-cloud-cli-'));
  const served = await spawnServe(['--log-level', 'info'], env());
  child = served.child;
  gateway = served.gateway;
  serveLog = served.log;
}, 180_000);

afterAll(async () => {
  if (onPostgres) return;
  child?.kill('SIGTERM');
  if (child && child.exitCode === null) await new Promise((r) => child.once('exit', r));
  await rm(dataDir, { recursive: true, force: true });
});

// The embedded database is the CLI's own concern: not repeated in the PostgreSQL pass.
// Each command is a fresh Node process loading TypeScript: generous timeouts on a busy 2-core machine.
describe.skipIf(onPostgres)('gatehouse-cloud CLI', { timeout: 240_000 }, () => {
  it('serve writes runtime.json (0600) and answers health', async () => {
    const rt = JSON.parse(await readFile(join(dataDir, 'runtime.json'), 'utf8'));
    expect(rt).toMatchObject({ pid: child.pid, database: 'pglite' });
    expect(`${rt.base_url}/gateway/v1`).toBe(gateway);
    expect((await stat(join(dataDir, 'runtime.json'))).mode & 0o777).toBe(0o600);
    expect((await rawRequest(`${gateway}/health`, 'GET', {})).body.status).toBe('ok');
  });

  it('operator commands go through the running service and print the license key once', async () => {
    const r = await cli('licenses', 'create', '--plan', 'pro', '--sites', '2', '--json');
    expect(r.status).toBe(0);
    const lic = JSON.parse(r.stdout);
    expect(lic.license_key).toMatch(/^ghl_/);
    const site = await register(gateway);
    expect((await site.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
    const list = JSON.parse((await cli('licenses', 'list', '--json')).stdout);
    expect(list).toContainEqual(expect.objectContaining({ id: lic.id, sites_used: 1, site_limit: 2 }));
    expect(JSON.stringify(list)).not.toContain(lic.license_key);
    expect((await cli('licenses', 'revoke', lic.id)).status).toBe(0);
    expect((await site.post('entitlements/check', { feature: 'mcp.core' })).body.error.code).toBe('license_invalid');
    const keys = await cli('keys', 'show');
    expect(keys.status).toBe(0);
    expect(keys.stdout).toMatch(/ed_\S+\s+active/);
  });

  it('AI and release commands: providers (no key anywhere), account keys shown once, policies, releases from relative paths', async () => {
    const add = await cli(
      'providers',
      'add',
      'openai-main',
      '--kind',
      'openai',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--api-key-env',
      'OPENAI_MAIN_KEY',
      '--models',
      'gpt-4o-mini,gpt-4o',
      '--tags',
      'eu,approved',
      '--json',
    );
    expect(add.status).toBe(0);
    expect((await cli('providers', 'disable', 'openai-main')).status).toBe(0);
    const providers = JSON.parse((await cli('providers', 'list', '--json')).stdout);
    expect(providers.providers).toEqual([
      {
        id: 'openai-main',
        kind: 'openai',
        base_url: 'http://127.0.0.1:9/v1',
        api_key_env: 'OPENAI_MAIN_KEY',
        models: ['gpt-4o-mini', 'gpt-4o'],
        tags: ['eu', 'approved'],
        enabled: false,
      },
    ]);
    expect((await cli('providers', 'add', 'x', '--base-url', 'http://a/v1')).status).toBe(2);

    const acc = JSON.parse((await cli('accounts', 'add', 'Agency One', '--json')).stdout);
    const created = await cli('accounts', 'keys', 'create', acc.id, '--label', 'reporting');
    expect(created.status).toBe(0);
    const key = /key: (gha_\S+)/.exec(created.stdout)![1]!;
    expect(key).toMatch(/^gha_[A-Za-z0-9_-]{43}$/);
    const keys = await cli('accounts', 'keys', 'list', '--account', acc.id, '--json');
    expect(JSON.parse(keys.stdout)).toEqual([
      expect.objectContaining({ account_id: acc.id, label: 'reporting', revoked_at: null }),
    ]);
    expect(keys.stdout).not.toContain(key);
    expect((await cli('accounts', 'keys', 'nope')).status).toBe(2);
    const policy = await cli(
      'accounts',
      'policy',
      'set',
      acc.id,
      '--ai-providers',
      'openai-main',
      '--ai-tags',
      'eu',
      '--support-priority',
      'p1',
      '--json',
    );
    expect(JSON.parse(policy.stdout)).toMatchObject({
      ai_allowed_providers: ['openai-main'],
      ai_required_tags: ['eu'],
      support_priority: 'p1',
    });

    const dir = await mkdtemp(join(tmpdir(), 'gh-cli-rel-'));
    await writeFile(join(dir, 'Gatehouse-2.0.0.AppImage'), 'release bytes');
    const pub = cliIn(
      dir,
      'releases',
      'publish',
      '--product',
      'mcp',
      '--channel',
      'stable',
      '--version',
      '2.0.0',
      '--staging',
      '20',
      'Gatehouse-2.0.0.AppImage',
      '--json',
    );
    expect(pub.status).toBe(0);
    expect(JSON.parse(pub.stdout)).toMatchObject({
      version: '2.0.0',
      staging_percentage: 20,
      files: [{ name: 'Gatehouse-2.0.0.AppImage', platform: 'linux', arch: 'x64', size: 13 }],
    });
    expect(await readFile(join(dataDir, 'releases/mcp/stable/2.0.0/Gatehouse-2.0.0.AppImage'), 'utf8')).toBe(
      'release bytes',
    );
    expect(JSON.parse((await cli('releases', 'list', '--json')).stdout)).toContainEqual(
      expect.objectContaining({ product: 'mcp', channel: 'stable', version: '2.0.0', staging_percentage: 20 }),
    );
    await rm(dir, { recursive: true, force: true });
  });

  it('says what the first start of the embedded database is doing before the wait', () => {
    const lines = serveLog()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string });
    const creating = lines.findIndex((l) => /creating the embedded database in .*pgdata/.test(l.msg));
    expect(creating).toBeGreaterThanOrEqual(0);
    expect(creating).toBeLessThan(lines.findIndex((l) => l.msg === 'gatehouse-cloud listening'));
  });

  it('operator output: sentences by default, the same data as JSON with --json', async () => {
    const add = await cli(
      'providers',
      'add',
      'words-main',
      '--kind',
      'openai',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--api-key-env',
      'WORDS_KEY',
      '--models',
      'm-1',
      '--tags',
      'eu',
    );
    expect(add.status).toBe(0);
    expect(add.stdout).toBe(
      'Provider words-main added (openai, enabled): models m-1; tags eu. Its key is read from $WORDS_KEY when a call is made.\n',
    );
    const limit = await cli(
      'limits',
      'set',
      '--scope',
      'account',
      '--subject',
      'acc_words',
      '--metric',
      'reports',
      '--period',
      'month',
      '--limit',
      '7',
    );
    expect(limit.stdout).toBe('Limit set: reports at most 7 a month for account acc_words.\n');
    expect(
      (
        await cli(
          'limits',
          'set',
          '--scope',
          'account',
          '--subject',
          'acc_words',
          '--metric',
          'reports',
          '--period',
          'month',
          '--limit',
          'none',
        )
      ).stdout,
    ).toBe('The limit is removed.\n');
    const lic = JSON.parse((await cli('licenses', 'create', '--plan', 'pro', '--json')).stdout);
    const table = await cli('licenses', 'list', '--account', lic.account_id);
    expect(table.stdout.split('\n')[0]).toMatch(/SITES_USED\s+SITES_ALLOWED\s+STAGING_USED\s+STAGING_ALLOWED/);
    expect(table.stdout.split('\n')[1]).toMatch(new RegExp(`${lic.id}.*\\bpro\\s+active\\s+0\\s+3\\s+0\\s+3\\b`));
    expect(JSON.parse((await cli('licenses', 'list', '--account', lic.account_id, '--json')).stdout)).toEqual([
      expect.objectContaining({ site_limit: null, sites_allowed: 3, staging_allowed: 3 }),
    ]);
    const acc = JSON.parse((await cli('accounts', 'add', 'Words Inc', '--json')).stdout);
    const human = [
      await cli('accounts', 'add', 'Words Two'),
      await cli('providers', 'disable', 'words-main'),
      await cli('providers', 'class', 'quick', '--models', 'm-1'),
      await cli(
        'accounts',
        'policy',
        'set',
        acc.id,
        '--ai-providers',
        'words-main',
        '--features-off',
        'verto.translate',
      ),
      await cli('accounts', 'policy', 'show', acc.id),
      await cli('products', 'disable', 'verto', '--account', acc.id),
      await cli('licenses', 'extend', lic.id, '--expires', 'never'),
      await cli('plans', 'set', 'pro', '--site-limit', '3'),
      await cli('keys', 'rotate'),
    ];
    for (const r of human) {
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).not.toMatch(/^[[{]/);
      expect(r.stdout).not.toMatch(/^\s*"\w+":/m);
    }
    expect(human[3]!.stdout).toContain('AI providers allowed: words-main');
    expect(human[3]!.stdout).toContain('features off:         verto.translate');
    expect(human[8]!.stdout).toMatch(/^Signing key ed_\S+ is now active; ed_\S+ is retired/);
  });

  it('refuses a name with a bidi override or a zero-width character, naming it', async () => {
    const r = await cli('accounts', 'add', 'acme\u202etxt.exe');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no bidi controls or zero-width characters \(found U\+202E at position 5\)/);
  });

  it('a database that cannot be reached: one clear line and exit code 3, no stack', () => {
    const r = cliChild('licenses', 'list', '--database-url', 'postgres://ops:hunter2@127.0.0.1:1/gatehouse');
    expect(r.status).toBe(3);
    expect(r.stderr).toBe(
      'gatehouse-cloud: cannot use the database at postgres://ops@127.0.0.1:1/gatehouse: the connection was refused (is PostgreSQL running there, on that port?). Check --database-url or DATABASE_URL [gateway_unavailable]\n',
    );
    const j = cliChild('licenses', 'list', '--database-url', 'postgres://127.0.0.1:1/gatehouse', '--json');
    expect([j.status, JSON.parse(j.stderr).code]).toEqual([3, 'gateway_unavailable']);
  });

  it('exit codes: 2 for bad usage, 1 for a failed operation, with --json errors', () => {
    expect(cliChild('licenses').status).toBe(2);
    expect(cliChild('nonsense').status).toBe(2);
    expect(cliChild('licenses', 'create').status).toBe(2);
    const missing = cliChild('licenses', 'revoke', 'lic_nope', '--json');
    expect(missing.status).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ ok: false, code: 'not_found' });
    const badPlan = cliChild('licenses', 'create', '--plan', 'platinum', '--json');
    expect([badPlan.status, JSON.parse(badPlan.stderr).code]).toEqual([1, 'not_found']);
  });
});
