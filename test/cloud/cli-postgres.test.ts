import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, register } from './helpers/client.ts';
import { freshDatabaseUrl, onPostgres } from './helpers/cloud-harness.ts';
import { CLOUD_BIN as BIN, spawnServe } from './helpers/serve-child.ts';

/**
 * Operator commands on PostgreSQL as the docs show them:
 * `serve --database-url` keeps its master key in its data dir; an operator
 * command run with only `--database-url` (another working directory, no
 * --data-dir) finds that key through the database, makes no key of its own,
 * and, when the key cannot be found or is another, says where it is and how
 * to pass it (before: a master-key mismatch called internal_error, and a
 * stray master.key in the operator's default data dir).
 */
let url: string;
let serveDir: string;
let home: string;
let child: ChildProcess;
let gateway: string;

const baseEnv = () => {
  const e: NodeJS.ProcessEnv = { ...process.env, XDG_DATA_HOME: home };
  for (const k of ['GATEHOUSE_CLOUD_MASTER_KEY', 'GATEHOUSE_CLOUD_DATA_DIR', 'DATABASE_URL']) delete e[k];
  return e;
};
const cli = (extra: NodeJS.ProcessEnv, ...args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args, '--database-url', url], {
    env: { ...baseEnv(), ...extra },
    encoding: 'utf8',
    timeout: 120_000,
    cwd: home,
  });
const operatorDefaultKey = () => join(home, 'gatehouse-cloud', 'master.key');

beforeAll(async () => {
  if (!onPostgres) return;
  url = await freshDatabaseUrl();
  serveDir = await mkdtemp(join(tmpdir(), 'gh-serve-'));
  home = await mkdtemp(join(tmpdir(), 'gh-operator-home-'));
  ({ child, gateway } = await spawnServe(
    ['--log-level', 'error', '--data-dir', serveDir, '--database-url', url],
    baseEnv(),
  ));
}, 180_000);

afterAll(async () => {
  if (!onPostgres) return;
  child?.kill('SIGTERM');
  if (child && child.exitCode === null) await new Promise((r) => child.once('exit', r));
  await Promise.all([serveDir, home].map((d) => rm(d, { recursive: true, force: true })));
});

describe.runIf(onPostgres)('operator commands on PostgreSQL', { timeout: 240_000 }, () => {
  it("find serve's master key through the database and leave no key of their own", async () => {
    expect(existsSync(join(serveDir, 'master.key'))).toBe(true);
    const created = cli({}, 'licenses', 'create', '--plan', 'pro', '--json');
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    const lic = JSON.parse(created.stdout);
    const site = await register(gateway);
    expect((await site.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
    expect(cli({}, 'keys', 'show').status).toBe(0);
    expect(existsSync(operatorDefaultKey())).toBe(false);
  });

  it('say where the key is and how to pass it when it is not there, and never make one', async () => {
    const key = join(serveDir, 'master.key');
    await rename(key, `${key}.away`);
    try {
      const r = cli({}, 'licenses', 'list');
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(
        `this database was set up with a master key that is not here: it is in ${key} (the data dir serve used): pass --data-dir ${serveDir} or set GATEHOUSE_CLOUD_MASTER_KEY`,
      );
      expect(r.stderr).toMatch(/\[invalid_request\]\n$/);
      expect(r.stderr).not.toMatch(/internal_error|\n\s+at /);
      expect(existsSync(operatorDefaultKey())).toBe(false);
    } finally {
      await rename(`${key}.away`, key);
    }
    expect(cli({}, 'licenses', 'list', '--data-dir', serveDir).status).toBe(0);
  });

  it('name a wrong key as wrong, with where the right one is', () => {
    const r = cli({ GATEHOUSE_CLOUD_MASTER_KEY: Buffer.alloc(32, 9).toString('base64') }, 'licenses', 'list', '--json');
    expect(r.status).toBe(1);
    const err = JSON.parse(r.stderr);
    expect(err).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(err.message).toContain(
      'the master key from GATEHOUSE_CLOUD_MASTER_KEY is not the one this database was set up with',
    );
    expect(err.message).toContain(join(serveDir, 'master.key'));
  });

  it('the service still answers with its own key', async () => {
    expect((await rawRequest(`${gateway}/health`, 'GET', {})).body.status).toBe('ok');
  });
});
