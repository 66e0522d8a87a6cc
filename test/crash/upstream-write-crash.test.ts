import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StagedPayload } from '../../main/contract/staged.ts';
import { startGateway, type Gateway } from '../cloud-client/helpers/world.ts';
import { cliJson, collect, dirArgs, runCli, spawnCli, startServe, type Served } from '../cli/cli-harness.ts';
import { connectClient } from '../helpers/service.ts';
import { TEST_UPSTREAM, until } from '../plugins/upstream/upstream-world.ts';

/**
 * SIGKILL of the service while an upstream write is in flight: the upstream
 * got the call (its journal has the line), the service never learnt the
 * outcome. After the restart the write is `failed` with `outcome_unknown`
 * for a person to check, and it is not applied a second time.
 */
let gw: Gateway;
let dir: string;
let work: string;
let served: Served | null = null;

beforeAll(async () => {
  gw = await startGateway();
  dir = await mkdtemp(join(tmpdir(), 'gh-upcrash-'));
  work = await mkdtemp(join(tmpdir(), 'gh-upcrash-work-'));
}, 120_000);
afterAll(async () => {
  await served?.stop('SIGKILL');
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

it('a write in flight at SIGKILL ends outcome_unknown and is never applied twice', async () => {
  const journal = join(work, 'journal.txt');
  await writeFile(journal, '');
  served = await startServe(dir);
  await cliJson(dir, ['cloud', 'connect', '--url', gw.url]);
  const lic = await gw.license('pro');
  const activate = spawnCli(['cloud', 'activate', '-', ...dirArgs(dir), '--json']);
  activate.stdin.end(`${lic.license_key}\n`);
  expect((await collect(activate)).code).toBe(0);
  const added = await runCli([
    'upstreams',
    'add',
    't',
    '--stdio',
    '--env',
    `JOURNAL=${journal}`,
    '--allow-write',
    work,
    ...dirArgs(dir),
    '--json',
    '--',
    process.execPath,
    TEST_UPSTREAM,
  ]);
  expect(added.code, added.stderr).toBe(0);
  const { token } = await cliJson<{ token: string }>(dir, ['tokens', 'create', '--label', 'agent']);

  const client = await connectClient(served.info.mcp_url, token);
  const staged = await client.callTool({ name: 't__append', arguments: { line: 'once', hold_ms: 60_000 } });
  await client.close();
  const id = (staged.structuredContent as { staged_id: string }).staged_id;
  expect(id).toMatch(/^stg_/);

  const confirming = spawnCli(['staged', 'confirm', id, ...dirArgs(dir), '--json']);
  confirming.stdin.end();
  const confirmed = collect(confirming);
  await until(async () => (await readFile(journal, 'utf8')) === 'once\n', 20_000, 'the upstream to receive the write');
  await served.stop('SIGKILL');
  served = null;
  expect((await confirmed).code).not.toBe(0);

  served = await startServe(dir);
  const after = await cliJson<StagedPayload>(dir, ['staged', 'show', id]);
  expect(after).toMatchObject({
    status: 'failed',
    error_code: 'outcome_unknown',
    decided_by: { kind: 'service', job: 'recovery' },
  });
  const again = await runCli(['staged', 'confirm', id, ...dirArgs(dir), '--json']);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('staged_already_decided');
  await new Promise((r) => setTimeout(r, 500));
  expect(await readFile(journal, 'utf8')).toBe('once\n');

  // A person checks the upstream (the journal has the line) and settles it from the CLI: recorded, never re-sent.
  const shown = await runCli(['staged', 'show', id, ...dirArgs(dir)]);
  expect(shown.stdout).toContain(`gatehouse staged settle ${id} applied|not-applied`);
  const usage = await runCli(['staged', 'settle', id, 'maybe', ...dirArgs(dir)]);
  expect(usage.code).toBe(2);
  const settled = await runCli(['staged', 'settle', id, 'applied', ...dirArgs(dir)]);
  expect(settled.code, settled.stderr).toBe(0);
  expect(settled.stdout).toContain('settled: it was applied');
  expect(await cliJson<StagedPayload>(dir, ['staged', 'show', id])).toMatchObject({
    status: 'confirmed',
    settlement: { outcome: 'applied', was: 'outcome_unknown', by: { kind: 'person', surface: 'cli' } },
  });
  const twice = await runCli(['staged', 'settle', id, 'not-applied', ...dirArgs(dir), '--json']);
  expect(twice.code).toBe(1);
  expect(twice.stderr).toContain('staged_already_decided');
  expect(await readFile(journal, 'utf8')).toBe('once\n');
}, 180_000);
