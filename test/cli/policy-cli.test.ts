import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PolicyExplainAnswer, PolicyView } from '../../main/contract/policy.ts';
import type { TokenView } from '../../main/contract/tokens.ts';
import { connectClient } from '../helpers/service.ts';
import { dirArgs, here, sharedDataDir } from './cli-harness.ts';

/** `gatehouse policy ...` (the built CLI) on the data dir, then through a running service. */
const data = sharedDataDir();
// The commands run in this process (cli-harness.ts, runCliHere): what they do and answer, without a Node start each.
const cliJson = <T = unknown>(args: string[]) => here.cliJson<T>(data.dir, args);
const cliJsonError = (args: string[]) => here.cliJsonError(data.dir, args);
const onDir = (args: string[]) => here.runCli([...args, ...dirArgs(data.dir)]);
const GITHUB_TOKEN = `ghp_${'a1B2c3D4e5'.repeat(4)}`;
const FORBID_LIST = '@id("no-lists")\nforbid (principal, action == Action::"call", resource == Tool::"pages_list");\n';

describe('gatehouse policy', () => {
  it("show, check and explain on the data dir; an invalid file is refused with the validator's message and changes nothing", async () => {
    const shown = await cliJson<PolicyView>(['policy', 'show']);
    expect(shown).toMatchObject({ source: 'default', updated: null });
    expect(shown.policies).toContain('role-capabilities');
    // What show prints is a policy set takes: the note about it goes to stderr.
    const printed = await onDir(['policy', 'show']);
    expect(printed.stdout.trimEnd()).toBe(shown.text.trimEnd());
    expect(printed.stderr).toContain('the shipped default policy; policies: ');
    const roundTrip = join(data.dir, 'shown.cedar');
    await writeFile(roundTrip, printed.stdout);
    expect((await onDir(['policy', 'check', roundTrip])).code).toBe(0);
    const bad = join(data.dir, 'bad.cedar');
    await writeFile(bad, 'permit (principal, action, resource) when { resource.colour == "red" };');
    const refused = await cliJsonError(['policy', 'set', bad]);
    expect(refused).toMatchObject({ exit: 1, code: 'invalid_value' });
    expect(refused.message).toContain('colour');
    expect((await cliJson<PolicyView>(['policy', 'show'])).source).toBe('default');
    expect((await onDir(['policy', 'check'])).code).toBe(2);
    expect((await onDir(['policy', 'explain', '--tool', 'pages_list'])).code).toBe(2);
    expect((await onDir(['policy', 'explain', '--token', 'x', '--tool', 'pages_list', '--args', '[1]'])).code).toBe(2);
    const token = await cliJson<{ record: TokenView }>(['tokens', 'create', '--label', 'policy bot']);
    const why = await cliJson<PolicyExplainAnswer>([
      'policy',
      'explain',
      '--token',
      token.record.id,
      '--tool',
      'pages_update',
      '--args',
      '{"id": 1, "title": "New"}',
    ]);
    expect(why).toMatchObject({
      outcome: 'staged',
      call: { decision: 'allow', policies: ['role-capabilities'] },
      run_without_approval: { decision: 'deny', policies: [] },
    });
    const human = await onDir([
      'policy',
      'explain',
      '--token',
      token.record.id,
      '--tool',
      'pages_update',
      '--args',
      `{"id": 1, "title": "/notes/../.ssh", "content": "key ${GITHUB_TOKEN}"}`,
    ]);
    expect(human.stdout).toContain('run_without_approval: deny (no policy permits it)');
    // the values as the policy reads them: a path normalized, a secret as its kind (docs/policy.md)
    expect(human.stdout).toContain(
      'argument values the policy reads: id="1", title="/.ssh", content="secret:github_token"',
    );
    expect(human.stdout).not.toContain(GITHUB_TOKEN);
  }, 120_000);

  it('set through a running service: the next call is refused by name; the file on disk holds it', async () => {
    const served = await data.serve();
    const good = join(data.dir, 'good.cedar');
    await writeFile(good, `${await readFile(join(process.cwd(), 'policy', 'default.cedar'), 'utf8')}\n${FORBID_LIST}`);
    expect((await cliJson<{ policies: string[] }>(['policy', 'check', good])).policies).toContain('no-lists');
    const set = await onDir(['policy', 'set', good]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('no-lists');
    const token = await cliJson<{ token: string; record: TokenView }>(['tokens', 'create', '--label', 'refused bot']);
    const client = await connectClient(served.info.mcp_url, token.token);
    try {
      const r = (await client.callTool({ name: 'pages_list', arguments: {} })) as {
        isError?: boolean;
        content: Array<{ text: string }>;
      };
      expect(r.isError).toBe(true);
      expect(r.content[0]!.text).toContain("'no-lists'");
    } finally {
      await client.close();
    }
    const shown = await cliJson<PolicyView>(['policy', 'show']);
    expect(shown).toMatchObject({ source: 'custom' });
    expect(shown.text).toContain('no-lists');
  }, 120_000);
});
