import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail } from '../../main/contract/upstreams.ts';
import { dirArgs, here, REPO, sharedDataDir } from './cli-harness.ts';

/**
 * An MCP App's view at the terminal (docs/upstreams.md, "MCP Apps"): `add`
 * shows what each view asks for, a changed view waits and `review` prints
 * its HTML diff, and `--approve-view URI=HASH` approves exactly that.
 */
const data = sharedDataDir();
// The commands run in this process (cli-harness.ts, runCliHere): what they do and answer, without a Node start each.
const { cliJson, cliJsonError, runCli } = here;
const VIEW_UPSTREAM = `${REPO}test/fixtures/upstream/view-upstream.mjs`;
let dir: string;
let control: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-views-cli-'));
  control = join(dir, 'control.json');
  await writeFile(control, JSON.stringify({ ui: { permissions: { camera: {} } } }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('gatehouse upstreams and MCP App views', () => {
  it('add prints each view with what it asks for', async () => {
    const r = await runCli([
      'upstreams',
      'add',
      'b',
      '--stdio',
      '--env',
      `CONTROL_FILE=${control}`,
      '--env',
      `JOURNAL=${join(dir, 'journal.txt')}`,
      '--allow-read',
      dir,
      ...dirArgs(data.dir),
      '--',
      process.execPath,
      VIEW_UPSTREAM,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ui:\/\/b\/board\/view\.html\s+approved\s+permissions: camera/);
  });

  it('a changed view waits; review prints its HTML diff; --approve-view with the hash approves it', async () => {
    await writeFile(control, JSON.stringify({ html: '<p>board v2</p>\n', ui: { permissions: { camera: {} } } }));
    expect(await cliJson(data.dir, ['upstreams', 'test', 'b'])).toMatchObject({ ok: true });
    const shown = await runCli(['upstreams', 'review', 'b', ...dirArgs(data.dir)]);
    expect(shown.stdout).toMatch(/view ui:\/\/b\/board\/view\.html\s+changed/);
    expect(shown.stdout).toContain('- <p>board v1</p>');
    expect(shown.stdout).toContain('+ <p>board v2</p>');
    expect(shown.stdout).toContain('asks: permissions: camera');
    const v = (await cliJson<UpstreamDetail>(data.dir, ['upstreams', 'show', 'b'])).view_list![0]!;
    expect(shown.stdout).toContain(v.pending!.hash);
    // bound to what the person saw: another hash approves nothing
    expect(
      await cliJsonError(data.dir, [
        'upstreams',
        'review',
        'b',
        '--approve-view',
        `${v.name}=sha256:${'3'.repeat(64)}`,
      ]),
    ).toMatchObject({ code: 'conflict' });
    const ok = await runCli([
      'upstreams',
      'review',
      'b',
      '--approve-view',
      `${v.name}=${v.pending!.hash}`,
      ...dirArgs(data.dir),
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect((await cliJson<UpstreamDetail>(data.dir, ['upstreams', 'show', 'b'])).view_list![0]).toMatchObject({
      state: 'approved',
      hash: v.pending!.hash,
    });
  });
});
