import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { UpstreamView } from '../../../main/contract/upstreams.ts';
import { cliJson, dirArgs, runCli, startServe, tempDataDir, type Served } from '../../cli/cli-harness.ts';
import { TEST_UPSTREAM, until } from './upstream-world.ts';

/**
 * One invalid field in one upstream of upstreams.json.
 * Before, the whole file was moved aside and every upstream was gone (a log
 * line, nothing in the health report). Now that one upstream is set aside
 * (kept in the moved-aside original), the others load and connect, and the
 * health report, `status` and `serve`'s own output say which one and why.
 */
let dir: string;
let served: Served | null = null;
beforeAll(async () => {
  dir = await tempDataDir();
});
afterAll(async () => {
  await served?.stop('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

const add = async (id: string) => {
  const r = await runCli([
    'upstreams',
    'add',
    id,
    '--stdio',
    '--unconfined',
    ...dirArgs(dir),
    '--json',
    '--',
    process.execPath,
    TEST_UPSTREAM,
  ]);
  expect(r.code, r.stderr).toBe(0);
};

it('sets aside only the upstream with the bad field: the others run, and health, status and serve say what was set aside', async () => {
  await add('good');
  await add('bad');
  await add('also');
  const file = join(dir, 'upstreams.json');
  const doc = JSON.parse(await readFile(file, 'utf8')) as { upstreams: Array<Record<string, unknown>> };
  doc.upstreams.find((u) => u.id === 'bad')!.timeout_ms = 'soon';
  await writeFile(file, JSON.stringify(doc, null, 2));

  served = await startServe(dir);
  const said = served.info.warnings?.find((w) => w.code === 'upstream_set_aside');
  expect(said?.message).toMatch(
    /upstreams\.json had an invalid upstream: set aside upstream 'bad' \(upstreams\[1\]: timeout_ms: [^)]+\); the other upstreams run\. The original, with it, is in .+upstreams\.json\.[^ ]+: fix it there/,
  );
  const views = await cliJson<UpstreamView[]>(dir, ['upstreams', 'list']);
  expect(views.map((v) => v.id).sort()).toEqual(['also', 'good']);
  await until(
    async () =>
      (await cliJson<UpstreamView[]>(dir, ['upstreams', 'list'])).every((v) => v.health.status === 'connected'),
    30_000,
    'the other upstreams to connect',
  );
  const status = await cliJson<{ warnings: Array<{ code: string; message: string }> }>(dir, ['status']);
  expect(status.warnings.find((w) => w.code === 'upstream_set_aside')?.message).toBe(said?.message);

  // Never lost: the moved-aside original holds the set-aside upstream as it was.
  const backups = (await readdir(dir)).filter((n) => n.startsWith('upstreams.json.') && !n.endsWith('.tmp'));
  expect(backups).toHaveLength(1);
  const original = JSON.parse(await readFile(join(dir, backups[0]!), 'utf8')) as typeof doc;
  expect(original.upstreams.find((u) => u.id === 'bad')).toMatchObject({ timeout_ms: 'soon' });
  const now = JSON.parse(await readFile(file, 'utf8')) as typeof doc;
  expect(now.upstreams.map((u) => u.id)).toEqual(['good', 'also']);
}, 120_000);
