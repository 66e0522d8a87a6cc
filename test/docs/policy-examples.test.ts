import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PolicyQuery } from '../../main/core/policy/policy.ts';
import { createCedarEngine, POLICY_DIR } from '../../main/policy/cedar-engine.ts';

/** Every ```cedar block of docs/policy.md, added to the default policy, validates and decides as the doc says. */
const doc = await readFile(join(POLICY_DIR, '..', 'docs', 'policy.md'), 'utf8');
const blocks = [...doc.matchAll(/```cedar\n([\s\S]*?)```/g)].map((m) => m[1]!);
const base = await readFile(join(POLICY_DIR, 'default.cedar'), 'utf8');

function query(over: {
  action?: PolicyQuery['action'];
  tool?: string;
  kind?: string;
  token?: string;
  secrets?: string[];
  weekday?: number;
  hour?: number;
  args?: Record<string, string>;
}): PolicyQuery {
  const tool = over.tool ?? 'pages_update';
  return {
    action: over.action ?? 'call',
    principal: { type: 'User', id: 'usr_1' },
    resource: { type: 'Tool', id: tool },
    context: {
      arg_names: over.args ? Object.keys(over.args) : ['id'],
      secret_kinds: over.secrets ?? [],
      args: { __entity: { type: 'Args', id: 'call' } },
      arg_lists: { __entity: { type: 'ArgLists', id: 'call' } },
      approval_mode: 'admin',
      time: { date: '2026-11-25', hour: over.hour ?? 10, minute: 0, weekday: over.weekday ?? 3 },
    },
    entities: [
      {
        uid: { type: 'User', id: 'usr_1' },
        attrs: {
          login: 'admin',
          role: 'administrator',
          capabilities: ['read', 'edit_pages', 'publish_pages', 'delete_pages', 'manage_options'],
          token: { id: over.token ?? 'tok_other', label: 'l', client: '', read_only: false },
        },
        parents: [],
      },
      {
        uid: { type: 'Tool', id: tool },
        attrs: {
          name: tool,
          plugin: over.kind === 'upstream' ? 'files' : 'site',
          plugin_kind: over.kind ?? 'site',
          class: 'write',
          capability: 'edit_pages',
          feature: 'site.pages.write',
          target: '',
          disabled: false,
          decides_staged: false,
        },
        parents: [],
      },
      { uid: { type: 'Args', id: 'call' }, attrs: {}, parents: [], tags: over.args ?? { id: '12' } },
      { uid: { type: 'ArgLists', id: 'call' }, attrs: {}, parents: [], tags: {} },
    ],
  };
}

describe('docs/policy.md examples', () => {
  it('has four examples, each valid with the default policy', async () => {
    expect(blocks).toHaveLength(4);
    const engine = createCedarEngine({ activeText: () => null });
    // the default's policies and the example's one
    const defaults = (await engine.check(base)).policies.length;
    expect(defaults).toBe(8);
    for (const b of blocks) expect((await engine.check(`${base}\n${b}`)).policies.length).toBe(defaults + 1);
  });

  it('decide as described', async () => {
    const [deletes, ciBot, secrets, notes] = blocks.map((b) =>
      createCedarEngine({ activeText: () => `${base}\n${b}` }),
    );
    expect(await deletes!.decide(query({ tool: 'pages_delete' }))).toMatchObject({
      decision: 'deny',
      policies: ['no-page-deletes'],
    });
    expect((await deletes!.decide(query({}))).decision).toBe('allow');

    const unattended = { action: 'run_without_approval' as const, token: 'tok_ci0bot01' };
    expect(await ciBot!.decide(query(unattended))).toMatchObject({
      decision: 'allow',
      policies: ['ci-bot-updates-unattended'],
    });
    expect((await ciBot!.decide(query({ ...unattended, weekday: 0 }))).decision).toBe('deny');
    expect((await ciBot!.decide(query({ ...unattended, hour: 19 }))).decision).toBe('deny');
    expect((await ciBot!.decide(query({ ...unattended, token: 'tok_other' }))).decision).toBe('deny');

    expect(await secrets!.decide(query({ kind: 'upstream', secrets: ['aws_access_key'] }))).toMatchObject({
      decision: 'deny',
      policies: ['no-secrets-upstream'],
    });
    expect((await secrets!.decide(query({ kind: 'upstream' }))).decision).toBe('allow');
    expect((await secrets!.decide(query({ secrets: ['aws_access_key'] }))).decision).toBe('allow');

    const fsWrite = (args: Record<string, string>) => query({ kind: 'upstream', tool: 'files__write_file', args });
    expect((await notes!.decide(fsWrite({ path: '/home/me/notes/todo.md' }))).decision).toBe('allow');
    expect(await notes!.decide(fsWrite({ path: '/home/me/.ssh/authorized_keys' }))).toMatchObject({
      decision: 'deny',
      policies: ['files-writes-in-notes-only'],
    });
    // no path argument at all (another tool's shape) is refused too: the rule is written to fail closed
    expect((await notes!.decide(fsWrite({ file: '/home/me/notes/todo.md' }))).decision).toBe('deny');
    const move = { source: '/home/me/notes/a.md', destination: '/home/me/notes/b.md' };
    expect((await notes!.decide(fsWrite(move))).decision).toBe('allow');
    expect((await notes!.decide(fsWrite({ ...move, destination: '/tmp/b.md' }))).decision).toBe('deny');
    // a local tool is not the files upstream's
    expect((await notes!.decide(query({ args: { path: '/etc/passwd' } }))).decision).toBe('allow');
  });
});
