import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type {
  UpstreamDetail,
  UpstreamPromptView,
  UpstreamToolView,
  UpstreamView,
} from '../../main/contract/upstreams.ts';
import type { AuditPage } from '../../main/contract/audit.ts';
import type { RecipeView } from '../../main/contract/preview-recipes.ts';
import { promptHash } from '../../main/plugins/upstream/prompt-pins.ts';
import type { PromptDefinition } from '../../main/plugins/upstream/upstream-data.ts';
import { connectClient } from '../helpers/service.ts';
import { collect, dirArgs, here, sharedDataDir, spawnCli } from './cli-harness.ts';
import { EVERYTHING } from '../plugins/upstream/upstream-world.ts';

/** `gatehouse upstreams ...` as scripts run it: on the data dir, then through a running service (no restart). */
const data = sharedDataDir();
// The commands run in this process (cli-harness.ts, runCliHere); the ones that read stdin are child processes (spawnCli).
const { cliJson, cliJsonError, runCli } = here;
const HEADER_SECRET = 'hdr-9d2e7b-never-printed';

describe('gatehouse upstreams on the data dir', () => {
  it('add --stdio connects, prints the command, args and env names, pins the tools; --read marks a read', async () => {
    const r = await runCli([
      'upstreams',
      'add',
      'ev',
      '--stdio',
      '--env',
      'LOG_LEVEL=quiet-value-77',
      '--read',
      'echo',
      ...dirArgs(data.dir),
      '--',
      process.execPath,
      EVERYTHING,
      'stdio',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`command: ${process.execPath}`);
    expect(r.stdout).toContain(`args: ["${EVERYTHING}","stdio"]`);
    expect(r.stdout).toContain('env (names only): LOG_LEVEL');
    expect(r.stdout).not.toContain('quiet-value-77');
    expect(r.stdout).toMatch(/ev__echo\s+read\s+approved\s+sha256:[0-9a-f]{64}/);
    // its prompts printed with the tools, pinned approved as well
    expect(r.stdout).toMatch(/ev__simple-prompt\s+approved\s+sha256:[0-9a-f]{64}/);
    expect(await readFile(join(data.dir, 'upstreams.json'), 'utf8')).not.toContain('quiet-value-77');
  });

  it('list, tools, review and test work on the files', async () => {
    const list = await cliJson<UpstreamView[]>(data.dir, ['upstreams', 'list']);
    expect(list).toEqual([expect.objectContaining({ id: 'ev', kind: 'stdio', env_names: ['LOG_LEVEL'] })]);
    expect(list[0]!.tools.approved).toBeGreaterThan(5);
    const tools = await cliJson<UpstreamToolView[]>(data.dir, ['upstreams', 'tools', 'ev']);
    expect(tools.find((t) => t.tool === 'get-env')).toMatchObject({
      name: 'ev__get-env',
      state: 'approved',
      class: 'read',
    });
    const reviewed = await cliJson<UpstreamToolView[]>(data.dir, [
      'upstreams',
      'review',
      'ev',
      '--hide',
      'ev__get-env',
      '--write',
      'get-sum',
    ]);
    expect(reviewed.find((t) => t.tool === 'get-env')!.state).toBe('hidden');
    expect(reviewed.find((t) => t.tool === 'get-sum')!.class).toBe('write');
    expect((await runCli(['upstreams', 'review', 'ev', ...dirArgs(data.dir)])).stdout).toContain(
      'Nothing waits for review.',
    );
    expect(await cliJson(data.dir, ['upstreams', 'test', 'ev'])).toMatchObject({ id: 'ev', ok: true });
  });

  it('recipe saves, recipes lists and recipe --remove removes a preview recipe of your own, audited; a read that is a write is refused with why', async () => {
    const refused = await cliJsonError(data.dir, [
      'upstreams',
      'recipe',
      'ev',
      'get-sum',
      '--shows',
      'state',
      '--via',
      'get-sum:a=a',
    ]);
    expect(refused.code).toBe('invalid_value');
    expect(refused.message).toBe(
      "the recipe for 'get-sum' does not fit upstream 'ev': 'get-sum' is not classified as a read, and a preview calls only reads (mark it as a read first: gatehouse upstreams review ID --read get-sum)",
    );
    expect(
      (await runCli(['upstreams', 'recipe', 'ev', 'get-sum', '--shows', 'state', ...dirArgs(data.dir)])).code,
    ).toBe(2);
    // a read without ARG=PATH is bad usage; a tool name the contract refuses is said by the service
    expect(
      (
        await runCli([
          'upstreams',
          'recipe',
          'ev',
          'get-sum',
          '--shows',
          'state',
          '--via',
          'echo:message',
          ...dirArgs(data.dir),
        ])
      ).code,
    ).toBe(2);
    expect(
      (await cliJsonError(data.dir, ['upstreams', 'recipe', 'ev', 'get-sum', '--shows', 'state', '--via', 'e cho']))
        .message,
    ).toMatch(/^upstreams\.recipe_set: recipe\.reads\.0\.0\.tool: a tool name is the upstream's own name/);

    const r = await runCli([
      'upstreams',
      'recipe',
      'ev',
      'get-sum',
      '--shows',
      'state',
      '--via',
      'echo:message=a@first number',
      ...dirArgs(data.dir),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Saved your recipe for get-sum on ev: the next staging of it uses it.');
    expect(r.stdout).toContain('get-sum  yours  in use\n  get-sum: state via echo:message=a@first number');
    const listed = await cliJson<RecipeView[]>(data.dir, ['upstreams', 'recipes', 'ev']);
    expect(listed).toEqual([
      {
        tool: 'get-sum',
        source: 'person',
        overrides_shipped: false,
        problem: null,
        recipe: {
          tool: 'get-sum',
          shows: 'state',
          reads: [[{ tool: 'echo', args: { message: 'a' }, label: 'first number' }]],
        },
      },
    ]);
    const audit = await cliJson<AuditPage>(data.dir, ['audit', 'list', '--tool', 'upstreams.recipe_set']);
    expect(audit.entries[0]).toMatchObject({
      target: 'ev__get-sum',
      reason: 'get-sum: state via echo:message=a@first number',
    });
    expect(await cliJson(data.dir, ['upstreams', 'recipe', 'ev', 'get-sum', '--remove'])).toEqual([]);
    expect((await runCli(['upstreams', 'recipes', 'ev', ...dirArgs(data.dir)])).stdout).toContain(
      'Upstream ev has no preview recipes: its writes show their arguments',
    );
  });

  it('prompts: pinned at add, listed by upstreams prompts; a changed one waits for review --approve-prompt; a store from before prompt pins pins its first listing', async () => {
    const listed = await cliJson<UpstreamPromptView[]>(data.dir, ['upstreams', 'prompts', 'ev']);
    expect(listed.find((p) => p.prompt === 'simple-prompt')).toMatchObject({
      name: 'ev__simple-prompt',
      state: 'approved',
      hash: expect.stringMatching(/^sha256:/),
    });
    expect((await runCli(['upstreams', 'prompts', 'ev', ...dirArgs(data.dir)])).stdout).toMatch(
      /ev__args-prompt\s+approved\s+sha256:[0-9a-f]{64}/,
    );
    // What the upstream lists now differs from what was pinned (as if it changed its description since).
    const file = join(data.dir, 'upstreams.json');
    const edit = async (
      change: (u: {
        prompts?: Array<{ name: string; approved: { hash: string; definition: PromptDefinition } }> | null;
      }) => void,
    ) => {
      const stored = JSON.parse(await readFile(file, 'utf8')) as {
        upstreams: Array<Parameters<typeof change>[0] & { id: string }>;
      };
      change(stored.upstreams.find((x) => x.id === 'ev')!);
      await writeFile(file, JSON.stringify(stored));
    };
    const older = { name: 'simple-prompt', description: 'An older description.' };
    await edit(
      (u) =>
        void (u.prompts!.find((p) => p.name === 'simple-prompt')!.approved = {
          hash: promptHash(older),
          definition: older,
        }),
    );
    expect(await cliJson(data.dir, ['upstreams', 'test', 'ev'])).toMatchObject({ ok: true });
    expect(
      (await cliJson<UpstreamPromptView[]>(data.dir, ['upstreams', 'prompts', 'ev'])).find(
        (p) => p.prompt === 'simple-prompt',
      ),
    ).toMatchObject({ state: 'quarantined', pending: { reason: 'changed' } });
    const shown = (await runCli(['upstreams', 'review', 'ev', ...dirArgs(data.dir)])).stdout;
    expect(shown).toMatch(/prompt ev__simple-prompt\s+changed/);
    expect(shown).toContain('- "An older description."');
    const waiting = (await cliJson<UpstreamPromptView[]>(data.dir, ['upstreams', 'prompts', 'ev'])).find(
      (p) => p.prompt === 'simple-prompt',
    )!;
    expect(shown).toContain(waiting.pending!.hash);
    // An approval names the hash shown: without one, and no terminal to confirm at, nothing is approved.
    const bare = await runCli([
      'upstreams',
      'review',
      'ev',
      '--approve-prompt',
      'ev__simple-prompt',
      ...dirArgs(data.dir),
    ]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain(waiting.pending!.hash);
    expect(bare.stderr).toContain('--approve-prompt NAME=sha256:');
    // A hash other than the one waiting (the upstream swapped its definition since the review) approves nothing.
    const stale = await cliJsonError(data.dir, [
      'upstreams',
      'review',
      'ev',
      '--approve-prompt',
      `ev__simple-prompt=sha256:${'2'.repeat(64)}`,
    ]);
    expect(stale).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('changed (or was approved) since it was shown'),
    });
    expect(
      (await cliJson<UpstreamPromptView[]>(data.dir, ['upstreams', 'prompts', 'ev'])).find(
        (p) => p.prompt === 'simple-prompt',
      ),
    ).toMatchObject({ state: 'quarantined' });
    await cliJson(data.dir, [
      'upstreams',
      'review',
      'ev',
      '--approve-prompt',
      `ev__simple-prompt=${waiting.pending!.hash}`,
    ]);
    expect(
      (await cliJson<UpstreamPromptView[]>(data.dir, ['upstreams', 'prompts', 'ev'])).every(
        (p) => p.state === 'approved',
      ),
    ).toBe(true);

    // Stored before prompts were pinned: the first listing is pinned approved, once.
    await edit((u) => void delete u.prompts);
    expect(await cliJson(data.dir, ['upstreams', 'test', 'ev'])).toMatchObject({ ok: true });
    const pinned = await cliJson<UpstreamPromptView[]>(data.dir, ['upstreams', 'prompts', 'ev']);
    expect(pinned.length).toBe(listed.length);
    expect(pinned.map((p) => [p.name, p.state, p.hash])).toEqual(listed.map((p) => [p.name, 'approved', p.hash]));
  });

  it('a header value never appears in an error, a list or the files; bad usage is exit 2', async () => {
    const e = await cliJsonError(data.dir, [
      'upstreams',
      'add',
      'web',
      '--url',
      'http://127.0.0.1:9/mcp',
      '--header',
      `X-Api-Key: ${HEADER_SECRET}`,
    ]);
    expect(e.code).toBe('upstream_unavailable');
    expect(e.stderr).not.toContain(HEADER_SECRET);
    expect(await readFile(join(data.dir, 'upstreams.json'), 'utf8')).not.toContain(HEADER_SECRET);
    expect((await runCli(['upstreams', 'add', 'x', '--stdio', ...dirArgs(data.dir)])).code).toBe(2);
    expect(
      (await runCli(['upstreams', 'add', 'x', '--url', 'http://a/', '--env', 'A=b', ...dirArgs(data.dir)])).code,
    ).toBe(2);
    expect((await cliJsonError(data.dir, ['upstreams', 'add', 'Bad_Id', '--url', 'http://127.0.0.1:9/'])).code).toBe(
      'invalid_value',
    );
    expect((await cliJsonError(data.dir, ['upstreams', 'show', 'nope'])).code).toBe('not_found');
    // grant is a subcommand like the others (usage lists it)
    expect((await cliJsonError(data.dir, ['upstreams', 'grant', 'nope', '--allow-read', '/tmp'])).code).toBe(
      'not_found',
    );
  });
});

describe('gatehouse upstreams add --oauth --client-metadata-url', () => {
  it('stores the Client ID Metadata Document URL; https with a path only, and only with --oauth', async () => {
    const url = 'https://gw.example/.well-known/gatehouse/oauth-client.json';
    const r = await runCli([
      'upstreams',
      'add',
      'cimd',
      '--url',
      'http://127.0.0.1:9/mcp',
      '--oauth',
      '--client-metadata-url',
      url,
      ...dirArgs(data.dir),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const stored = JSON.parse(await readFile(join(data.dir, 'upstreams.json'), 'utf8')) as {
      upstreams: Array<{ id: string; transport: { oauth?: { client_metadata_url: string | null } } }>;
    };
    expect(stored.upstreams.find((u) => u.id === 'cimd')?.transport.oauth?.client_metadata_url).toBe(url);
    expect(
      (
        await runCli([
          'upstreams',
          'add',
          'x',
          '--url',
          'http://127.0.0.1:9/mcp',
          '--client-metadata-url',
          url,
          ...dirArgs(data.dir),
        ])
      ).code,
    ).toBe(2);
    expect(
      (
        await cliJsonError(data.dir, [
          'upstreams',
          'add',
          'y',
          '--url',
          'http://127.0.0.1:9/mcp',
          '--oauth',
          '--client-metadata-url',
          'http://gw.example/doc.json',
        ])
      ).code,
    ).toBe('invalid_value');
    expect(await cliJson(data.dir, ['upstreams', 'remove', 'cimd'])).toBeTruthy();
  });
});

describe('gatehouse upstreams through a running service', () => {
  it('add takes effect at once for MCP clients; remove too', async () => {
    const served = await data.serve();
    const token = (await cliJson<{ token: string }>(data.dir, ['tokens', 'create', '--label', 'cli-test'])).token;
    const client = await connectClient(served.info.mcp_url, token);
    try {
      const names = async () => (await client.listTools()).tools.map((t) => t.name);
      expect(await names()).toContain('ev__echo');
      expect(await names()).not.toContain('ev__get-env');
      // Options go before `--`: what follows is the upstream's own command line.
      const r = await runCli([
        'upstreams',
        'add',
        'ev2',
        '--stdio',
        ...dirArgs(data.dir),
        '--json',
        '--',
        process.execPath,
        EVERYTHING,
        'stdio',
      ]);
      expect(r.code, r.stderr).toBe(0);
      const added = JSON.parse(r.stdout) as UpstreamDetail;
      expect(added.health.status).toBe('connected');
      expect(await names()).toContain('ev2__echo');
      const shown = await cliJson<UpstreamDetail>(data.dir, ['upstreams', 'show', 'ev']);
      expect(shown.health.status).toBe('connected');
      await cliJson(data.dir, ['upstreams', 'remove', 'ev2']);
      expect(await names()).not.toContain('ev2__echo');
    } finally {
      await client.close();
    }
  });
});

describe('gatehouse upstreams add --oauth --client-id --client-secret -', () => {
  const SECRET = 'cs-5b1f0e-never-printed';
  const vaultSecrets = async () =>
    (JSON.parse(await readFile(join(data.dir, 'vault.json'), 'utf8')) as { secrets: Record<string, string> }).secrets;

  it('reads a confidential client secret from stdin into the vault only; refuses it as a flag value', async () => {
    const child = spawnCli([
      'upstreams',
      'add',
      'conf',
      '--url',
      'http://127.0.0.1:9/mcp',
      '--oauth',
      '--client-id',
      'gatehouse-confidential',
      '--client-secret',
      '-',
      ...dirArgs(data.dir),
      '--json',
    ]);
    child.stdin.end(`${SECRET}\n`);
    const r = await collect(child);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    const upstreamsJson = await readFile(join(data.dir, 'upstreams.json'), 'utf8');
    expect(upstreamsJson).not.toContain(SECRET);
    const stored = JSON.parse(upstreamsJson) as {
      upstreams: Array<{ id: string; transport: { oauth?: { client_id: string; client_secret_account: string } } }>;
    };
    const oauth = stored.upstreams.find((u) => u.id === 'conf')?.transport.oauth;
    expect(oauth).toMatchObject({ client_id: 'gatehouse-confidential' });
    expect((await vaultSecrets())[oauth!.client_secret_account]).toBe(SECRET);
    const shown = await runCli(['upstreams', 'show', 'conf', ...dirArgs(data.dir), '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toContain(SECRET);

    // Never on the command line, never without a client id, never empty.
    const given = await runCli([
      'upstreams',
      'add',
      'conf2',
      '--url',
      'http://127.0.0.1:9/mcp',
      '--oauth',
      '--client-id',
      'c',
      '--client-secret',
      SECRET,
      ...dirArgs(data.dir),
    ]);
    expect(given.code).toBe(2);
    expect(given.stderr).toMatch(/stdin/);
    expect(given.stdout + given.stderr).not.toContain(SECRET);
    const lone = spawnCli([
      'upstreams',
      'add',
      'conf3',
      '--url',
      'http://127.0.0.1:9/mcp',
      '--oauth',
      '--client-secret',
      '-',
      ...dirArgs(data.dir),
    ]);
    lone.stdin.end(SECRET);
    expect((await collect(lone)).code).toBe(2);
    const empty = spawnCli([
      'upstreams',
      'add',
      'conf4',
      '--url',
      'http://127.0.0.1:9/mcp',
      '--oauth',
      '--client-id',
      'c',
      '--client-secret',
      '-',
      ...dirArgs(data.dir),
    ]);
    empty.stdin.end('\n');
    expect((await collect(empty)).code).toBe(2);

    // remove deletes it from the vault too.
    expect(await cliJson(data.dir, ['upstreams', 'remove', 'conf'])).toBeTruthy();
    expect(Object.keys(await vaultSecrets())).not.toContain(oauth!.client_secret_account);
  });
});
