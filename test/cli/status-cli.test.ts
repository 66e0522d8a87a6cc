import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HealthReport } from '../../main/contract/health.ts';
import { dirArgs, here, sharedDataDir } from './cli-harness.ts';
import { TEST_UPSTREAM } from '../plugins/upstream/upstream-world.ts';

/** `gatehouse status`: what the Overview says, in a terminal; a definition held for review is not "fine". */
const data = sharedDataDir();
// The commands run in this process (cli-harness.ts, runCliHere): what they do and answer, without a Node start each.
const { cliJson, runCli } = here;

describe('gatehouse status', () => {
  it('says the gateway, the approvals waiting and no warnings on a fresh data dir', async () => {
    const r = await runCli(['status', ...dirArgs(data.dir)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('no service is running');
    expect(r.stdout).toContain('No staged write waits for approval.');
    expect(r.stdout).not.toContain('definitions_review');
  });

  it('says how many definitions wait for review, and where, until they are reviewed', async () => {
    const add = await runCli([
      'upstreams',
      'add',
      'fx',
      '--stdio',
      ...dirArgs(data.dir),
      '--',
      process.execPath,
      TEST_UPSTREAM,
    ]);
    expect(add.code, add.stderr).toBe(0);
    // the upstream lists a changed lookup: held for review, as a re-listing leaves it
    const file = join(data.dir, 'upstreams.json');
    const doc = JSON.parse(await readFile(file, 'utf8')) as {
      upstreams: Array<{
        tools: Array<{ name: string; approved: { definition: Record<string, unknown> }; pending: unknown }>;
      }>;
    };
    const lookup = doc.upstreams[0]!.tools.find((t) => t.name === 'lookup')!;
    lookup.pending = {
      hash: `sha256:${'1'.repeat(64)}`,
      definition: { ...lookup.approved.definition, description: 'Looks a word up, differently.' },
      reason: 'changed',
    };
    await writeFile(file, JSON.stringify(doc));
    const r = await runCli(['status', ...dirArgs(data.dir)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /! 1 definition waits for review \(fx: 1 tool\).*gatehouse upstreams review fx\. \(definitions_review\)/,
    );
    const json = await cliJson<HealthReport>(data.dir, ['status']);
    expect(json.warnings.map((w) => w.code)).toContain('definitions_review');
    const reviewed = await runCli([
      'upstreams',
      'review',
      'fx',
      '--approve',
      `lookup=sha256:${'1'.repeat(64)}`,
      ...dirArgs(data.dir),
    ]);
    expect(reviewed.code, reviewed.stderr).toBe(0);
    const after = await runCli(['status', ...dirArgs(data.dir)]);
    expect(after.code).toBe(0);
    expect(after.stdout, reviewed.stdout).not.toContain('definitions_review');
  });

  it('takes no arguments', async () => {
    const r = await runCli(['status', 'extra', ...dirArgs(data.dir)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('status takes no arguments');
  });
});
