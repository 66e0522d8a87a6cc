import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyExplainAnswer } from '../../main/contract/policy.ts';
import type { StagedPayload } from '../../main/contract/staged.ts';
import { ARG_VALUE_LIMITS, argValuesOf } from '../../main/core/policy/arg-values.ts';
import { callShapeOf } from '../../main/core/policy/policy.ts';
import { scanSecrets, SCAN_LIMITS } from '../../main/lib/secret-scan.ts';
import { FILESYSTEM, startUpstreamWorld, textOf, type UpstreamWorld } from '../plugins/upstream/upstream-world.ts';

const GITHUB_TOKEN = `ghp_${'Zy9Xw8Vu7T'.repeat(4)}`;
const valuesOf = (args: Record<string, unknown>) => argValuesOf(args, scanSecrets(args));

describe('the argument values a policy reads', () => {
  it('gives scalars as text, arrays item by item, and leaves objects and null out', () => {
    expect(valuesOf({ path: '/n/a.md', count: 3, ratio: 0.5, force: false, opts: { a: 1 }, none: null })).toEqual({
      args: { path: '/n/a.md', count: '3', ratio: '0.5', force: 'false' },
      lists: {},
    });
    expect(valuesOf({ paths: ['/n/a', 2, true], mixed: ['a', { b: 1 }] })).toEqual({
      args: {},
      lists: { paths: ['/n/a', '2', 'true'] },
    });
  });

  it('normalizes absolute and ~/ paths, so .. cannot step out of a pattern; relative text is as sent', () => {
    expect(valuesOf({ a: '/home/me/notes/../.ssh/id_rsa', b: '~/notes/./x//y', c: 'notes/../x' }).args).toEqual({
      a: '/home/me/.ssh/id_rsa',
      b: '~/notes/x/y',
      c: 'notes/../x',
    });
  });

  it('gives a secret as its kind, by its shape or by its key, in a value or inside a list', () => {
    const v = valuesOf({ content: `token ${GITHUB_TOKEN}`, password: 'hunter2', keys: ['ok', GITHUB_TOKEN] });
    expect(v).toEqual({
      args: { content: 'secret:github_token', password: 'secret:secret_named_value' },
      lists: { keys: ['ok', 'secret:github_token'] },
    });
    expect(JSON.stringify(v)).not.toContain('hunter2');
  });

  it('leaves out what passes the bounds, and gives nothing when the scanner could not check everything', () => {
    const long = 'x'.repeat(ARG_VALUE_LIMITS.chars + 1);
    expect(valuesOf({ long, short: 'ok' }).args).toEqual({ short: 'ok' });
    expect(valuesOf({ many: Array.from({ length: ARG_VALUE_LIMITS.items + 1 }, () => 'a') }).lists).toEqual({});
    const wide = Object.fromEntries(Array.from({ length: ARG_VALUE_LIMITS.names + 5 }, (_, i) => [`k${i}`, 'v']));
    expect(Object.keys(valuesOf(wide).args)).toHaveLength(ARG_VALUE_LIMITS.names);
    const big = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'y'.repeat(1000)]));
    expect(Object.keys(valuesOf(big).args)).toHaveLength(Math.floor(ARG_VALUE_LIMITS.total / 1000));
    // a finding of scan_limit: what was not checked may be a secret, so no value at all
    expect(argValuesOf({ a: 'b' }, [{ kind: 'scan_limit', path: '$.z' }])).toEqual({ args: {}, lists: {} });
    const full = Array.from({ length: SCAN_LIMITS.findings }, () => ({ kind: 'bearer', path: '$.z' }));
    expect(argValuesOf({ a: 'b' }, full)).toEqual({ args: {}, lists: {} });
  });

  it('is part of the call shape a staged write keeps', () => {
    expect(callShapeOf({ path: '/a/../b' })).toEqual({
      arg_names: ['path'],
      secret_kinds: [],
      arg_values: { args: { path: '/b' }, lists: {} },
    });
  });
});

/**
 * The policy a new user writes first, "the files upstream writes only inside
 * notes", against the real server-filesystem behind the desk (confined, its
 * two folders granted), through the real SDK client: a write in notes is
 * staged, one outside or stepping out with `..` is refused by the policy and
 * never reaches the server, explain shows the value read; a staged write's
 * confirm is asked about the values it was staged with.
 */
let u: UpstreamWorld;
let client: Client;
let root: string;
let notes: string;
let other: string;
const policyFor = (dir: string) => `
@id("files-writes-in-notes-only")
forbid (principal, action == Action::"call", resource)
when { resource.plugin == "files" && resource.class == "write" }
unless { context.args.hasTag("path") && context.args.getTag("path") like "${dir}/*" };`;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'gh-policy-args-')));
  notes = join(root, 'notes');
  other = join(root, 'other');
  await mkdir(notes);
  await mkdir(other);
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'files',
    transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, notes, other] },
  });
  const current = await u.ok<{ text: string }>('GET', 'policy');
  await u.ok('PUT', 'policy', { text: `${current.text}\n${policyFor(notes)}` });
  client = await u.mcp();
}, 120_000);
afterAll(async () => {
  await client?.close();
  await u?.stop();
  await rm(root, { recursive: true, force: true });
});

describe('a policy on argument values, against server-filesystem', () => {
  const write = (path: string) => client.callTool({ name: 'files__write_file', arguments: { path, content: 'hi\n' } });

  it('stages a write inside the folder and refuses one outside it, or stepping out with ..', async () => {
    const inside = await write(join(notes, 'todo.md'));
    expect((inside.structuredContent as { status: string }).status).toBe('pending_approval');
    for (const path of [join(other, 'x.md'), `${notes}/../other/x.md`, `${notes}/./../other/x.md`]) {
      const r = (await write(path)) as { isError?: boolean };
      expect(r.isError, path).toBe(true);
      expect(textOf(r)).toContain("'files-writes-in-notes-only'");
    }
    // a read of the same place is not a write: the policy leaves it alone
    await writeFile(join(other, 'seen.md'), 'seen\n');
    expect(
      textOf(await client.callTool({ name: 'files__read_text_file', arguments: { path: join(other, 'seen.md') } })),
    ).toBe('seen\n');
    const pending = await u.ok<StagedPayload[]>('GET', 'staged');
    expect(pending.map((s) => s.tool)).toEqual(['files__write_file']);
  });

  it('shows in explain the value the policy read', async () => {
    const tokenId = (await u.ok<Array<{ id: string; label: string }>>('GET', 'tokens')).find(
      (t) => t.label === 'upstream tests',
    )!.id;
    const why = await u.ok<PolicyExplainAnswer>('POST', 'policy/explain', {
      token_id: tokenId,
      tool: 'files__write_file',
      args: { path: `${notes}/../other/x.md`, content: GITHUB_TOKEN },
    });
    expect(why.outcome).toBe('refused');
    expect(why.context.args).toEqual({ path: join(other, 'x.md'), content: 'secret:github_token' });
    expect(JSON.stringify(why)).not.toContain(GITHUB_TOKEN);
  });

  it('asks a confirm about the staged values: a policy narrowed since then refuses it, and nothing is written', async () => {
    const target = join(notes, 'later.md');
    const staged = await write(target);
    const id = (staged.structuredContent as { staged_id: string }).staged_id;
    const current = await u.ok<{ text: string }>('GET', 'policy');
    await u.ok('PUT', 'policy', { text: current.text.replace(`like "${notes}/*"`, `like "${notes}/todo*"`) });
    const confirm = await u.w.admin('POST', `staged/${id}/confirm`);
    expect(confirm.body).toMatchObject({ ok: false, code: 'policy_denied', details: { staged_id: id } });
    await expect(readFile(target, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
