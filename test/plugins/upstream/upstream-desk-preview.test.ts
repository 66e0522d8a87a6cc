import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import type { AuditPage } from '../../../main/contract/audit.ts';
import type { StagedView } from '../../../main/contract/staged.ts';
import { stagedText } from '../../../main/cli/staged-text.ts';
import { PREVIEW_LIMITS } from '../../../main/plugins/upstream/target-preview.ts';
import { FILESYSTEM, REPO, startUpstreamWorld, textOf, type UpstreamWorld } from './upstream-world.ts';

/**
 * The desk shows what an upstream write will change (docs/staging.md, "What an upstream write changes"):
 * the real server-filesystem behind the desk (confined, its folder granted), the real SDK client as the
 * agent. The diff goes to the desk (the admin API the console and the CLI read), never to the agent; a
 * file changed after staging makes the confirm refuse as stale_preview and keeps the person's text.
 */
let u: UpstreamWorld;
let client: Client;
let dir: string;
const OLD = ['# Notes', 'one', 'two secret-old-line', 'three', 'four', 'five', 'six', 'seven', ''].join('\n');

const stage = async (tool: string, args: Record<string, unknown>) => {
  const r = (await client.callTool({ name: `fs__${tool}`, arguments: args })) as {
    isError?: boolean;
    structuredContent?: { staged_id?: string };
    content: Array<{ text?: string }>;
  };
  expect(r.isError, textOf(r)).toBeFalsy();
  return { answer: r, id: r.structuredContent!.staged_id! };
};
const view = (id: string) => u.ok<StagedView>('GET', `staged/${id}`);

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'gh-desk-preview-')));
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'fs',
    transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, dir] },
  });
  client = await u.mcp();
}, 120_000);
afterAll(async () => {
  await client?.close();
  await u?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('write_file over an existing file', () => {
  it('shows the desk a line diff of the file now against the new text; the agent gets the receipt only', async () => {
    const file = join(dir, 'notes.md');
    await writeFile(file, OLD);
    const next = OLD.replace('three', 'THREE, changed');
    const { answer, id } = await stage('write_file', { path: file, content: next });
    // the agent's answer holds nothing of the file as it is: no diff, no summary of it, no version
    const said = JSON.stringify(answer);
    for (const desk of ['- three', '@@ line', 'lines changed', '"current"', '"version"'])
      expect(said).not.toContain(desk);
    const s = await view(id);
    expect(s.preview.kind).toBe('diff');
    expect(s.preview.current).toMatchObject({ summary: 'notes.md: 1 line changed', unavailable: null });
    expect(s.preview.current!.version).toMatch(/^[0-9a-f]{64}$/);
    expect(s.preview.changes).toEqual([
      {
        field: file,
        before: [
          '@@ line 1 @@',
          '  # Notes',
          '  one',
          '  two secret-old-line',
          '- three',
          '  four',
          '  five',
          '  six',
        ].join('\n'),
        after: [
          '@@ line 1 @@',
          '  # Notes',
          '  one',
          '  two secret-old-line',
          '+ THREE, changed',
          '  four',
          '  five',
          '  six',
        ].join('\n'),
      },
    ]);
    // the terminal's unified diff (gatehouse staged show)
    const shown = stagedText(s);
    expect(shown).toContain('now: notes.md: 1 line changed');
    expect(shown).toContain(
      [
        '    @@ line 1 -> 1 @@',
        '      # Notes',
        '      one',
        '      two secret-old-line',
        '    - three',
        '    + THREE, changed',
        '      four',
      ].join('\n'),
    );
    const done = await u.ok<StagedView>('POST', `staged/${id}/confirm`);
    expect(done.status).toBe('confirmed');
    expect(await readFile(file, 'utf8')).toBe(next);
    // the audit line of the applied write names what it replaced (the file's sha256 as the preview read it) and,
    // read again once applied, what it left
    const page = await u.ok<AuditPage>('GET', 'audit?tool=fs__write_file&result=confirmed');
    expect(page.entries[0]!.binding).toMatchObject({
      target: createHash('sha256').update(OLD).digest('hex'),
      target_after: createHash('sha256').update(next).digest('hex'),
    });
  });

  it('refuses a confirm as stale_preview when the file changed since it was read, and keeps the new text', async () => {
    const file = join(dir, 'stale.md');
    await writeFile(file, OLD);
    const { id } = await stage('write_file', { path: file, content: 'the agent wants this\n' });
    await writeFile(file, 'a person typed this meanwhile\n');
    const r = await u.w.admin('POST', `staged/${id}/confirm`);
    expect(r.body).toMatchObject({ ok: false, code: 'stale_preview', details: { changed: 'target' } });
    expect(await readFile(file, 'utf8')).toBe('a person typed this meanwhile\n');
    expect((await view(id)).status).toBe('failed');
  });

  it('shows a new file as its lines, a large file and a binary one by size and hash', async () => {
    const fresh = await view((await stage('write_file', { path: join(dir, 'new.md'), content: 'a\nb\nc' })).id);
    expect(fresh.preview.current!.summary).toBe('new.md: new file, 3 lines');
    expect(fresh.preview.changes[0]).toEqual({ field: join(dir, 'new.md'), after: '@@ line 1 @@\n+ a\n+ b\n+ c' });
    expect(stagedText(fresh)).toContain('    + b');

    const big = join(dir, 'big.txt');
    await writeFile(big, 'y'.repeat(5 * 1024 * 1024));
    const large = await view((await stage('write_file', { path: big, content: 'small\n' })).id);
    expect(large.preview.current!.summary).toBe('big.txt: file too large to show, replaced');
    expect(large.preview.changes[0]).toEqual({
      field: big,
      before: 'file too large to show: 5,242,880 bytes',
      after: expect.stringMatching(/^2 lines of new text, 6 bytes, sha256 [0-9a-f]{16}…$/),
    });
    expect(JSON.stringify(large.preview).length).toBeLessThan(PREVIEW_LIMITS.textChars);

    const bin = join(dir, 'image.bin');
    await writeFile(bin, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 0xff, 0xfe]));
    const binary = await view((await stage('write_file', { path: bin, content: 'text now\n' })).id);
    expect(binary.preview.current!.summary).toBe('image.bin: binary file, replaced');
    expect(binary.preview.changes[0]!.after).toMatch(/^2 lines of new text, 9 bytes, sha256/);
  });

  it('edit_file shows its edits applied to the current text; an edit that does not match says why', async () => {
    const file = join(dir, 'edit.md');
    await writeFile(file, OLD);
    const ok = await view((await stage('edit_file', { path: file, edits: [{ oldText: 'five', newText: 'FIVE' }] })).id);
    expect(ok.preview.current!.summary).toBe('edit.md: 1 line changed');
    expect(String(ok.preview.changes[0]!.after)).toContain('+ FIVE');
    const miss = await view(
      (await stage('edit_file', { path: file, edits: [{ oldText: 'not there', newText: 'x' }] })).id,
    );
    expect(miss.preview.kind).toBe('arguments');
    expect(miss.preview.current!.unavailable).toMatch(/^preview unavailable: edit 1's oldText is not in the file/);
    expect(await readFile(file, 'utf8')).toBe(OLD);
  });

  it('move_file and create_directory show what is there now', async () => {
    await writeFile(join(dir, 'from.md'), 'moving\n');
    const move = await view(
      (await stage('move_file', { source: join(dir, 'from.md'), destination: join(dir, 'to.md') })).id,
    );
    const states = move.preview.current!.states;
    expect(states.map((x) => x.label)).toEqual(['source (get_file_info)', 'destination (get_file_info)']);
    expect(states[0]!.text).toContain('size: 7');
    expect(states[0]!.text).not.toMatch(/accessed:/i);
    expect(states[1]!.text).toMatch(/^answered an error: .*ENOENT/);
    expect(stagedText(move)).toContain('  destination (get_file_info), now:');
  });
});

describe('a failed upstream write', () => {
  it("keeps the upstream's own words for the desk, the CLI and the agent's status check", async () => {
    const outside = '/gatehouse-not-allowed/x.md';
    const { id } = await stage('write_file', { path: outside, content: 'x' });
    expect((await view(id)).preview.current!.unavailable).toMatch(
      /^preview unavailable: the read answered an error: .*denied/i,
    );
    const r = await u.w.admin('POST', `staged/${id}/confirm`);
    expect(r.body).toMatchObject({ ok: false, code: 'upstream_error' });
    const failed = await view(id);
    expect(failed).toMatchObject({ status: 'failed', error_code: 'upstream_error' });
    expect(failed.error_message).toMatch(/^write_file on upstream fs failed: .*denied/i);
    expect(stagedText(failed)).toContain(`error: upstream_error: ${failed.error_message}`);
    const status = (await client.callTool({ name: 'staged_writes_status', arguments: { staged_id: id } })) as {
      structuredContent: { error_message?: string };
    };
    expect(status.structuredContent.error_message).toBe(failed.error_message);
  });
});

describe('server-memory behind the desk', () => {
  it('delete_entities shows the named entities as they are now', async () => {
    const memory = `${REPO}node_modules/@modelcontextprotocol/server-memory/dist/index.js`;
    await u.ok('POST', 'upstreams', {
      id: 'mem',
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [memory],
        env: [{ name: 'MEMORY_FILE_PATH', value: join(dir, 'memory.jsonl') }],
        sandbox: { write: [dir] },
      },
    });
    const m = await u.mcp();
    const created = (await m.callTool({
      name: 'mem__create_entities',
      arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] },
    })) as { structuredContent: { staged_id: string } };
    await u.ok('POST', `staged/${created.structuredContent.staged_id}/confirm`);
    const del = (await m.callTool({ name: 'mem__delete_entities', arguments: { entityNames: ['Ada'] } })) as {
      structuredContent: { staged_id: string };
    };
    expect(JSON.stringify(del)).not.toContain('wrote the first program');
    const s = await view(del.structuredContent.staged_id);
    expect(s.preview.current!.states).toHaveLength(1);
    expect(s.preview.current!.states[0]!.label).toBe('entities (open_nodes)');
    expect(s.preview.current!.states[0]!.text).toContain('wrote the first program');
    // applied: the entities read again (gone now) are another version than the one the person saw
    await u.ok('POST', `staged/${s.id}/confirm`);
    const page = await u.ok<AuditPage>('GET', 'audit?tool=mem__delete_entities&result=confirmed');
    const binding = page.entries[0]!.binding!;
    expect(binding.target).toBe(s.preview.current!.version);
    expect(binding.target_after).toMatch(/^[0-9a-f]{64}$/);
    expect(binding.target_after).not.toBe(binding.target);
    await m.close();
  });
});

describe('a hostile upstream behind the desk', () => {
  // A world of its own, whose preview reads may take 300 ms (the bound is injected): a hang costs that, not 5 s.
  const READ_MS = 300;
  const fixture = `${REPO}test/fixtures/upstream/preview-upstream.mjs`;
  let journal: string;
  let hw: UpstreamWorld;
  let h: Client;
  const add = async (id: string, mode: string) =>
    hw.ok('POST', 'upstreams', {
      id,
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [fixture],
        env: [
          { name: 'JOURNAL', value: journal },
          { name: 'READ_MODE', value: mode },
        ],
        sandbox: { write: [dir] },
      },
    });
  const hview = (id: string) => hw.ok<StagedView>('GET', `staged/${id}`);

  beforeAll(async () => {
    hw = await startUpstreamWorld({ license: null, previewReadMs: READ_MS });
    journal = join(dir, 'journal.txt');
    await writeFile(journal, '');
    for (const mode of ['hang', 'error', 'flood', 'ok']) await add(`p${mode}`, mode);
    h = await hw.mcp();
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await hw?.stop();
  });

  it('stages with the arguments and the reason when the read hangs, fails or floods, within the injected bound', async () => {
    for (const [mode, reason] of [
      ['hang', 'preview unavailable: read_text_file did not answer within 0.3 s'],
      ['error', 'the read answered an error: disk on fire'],
      // 50 MB is cut off by the time bound or closes the session first, whichever comes first here
      ['flood', 'preview unavailable: read_text_file '],
    ] as const) {
      const started = performance.now();
      const r = (await h.callTool({ name: `p${mode}__write_file`, arguments: { path: '/x', content: 'new' } })) as {
        structuredContent?: { staged_id: string };
      };
      const took = performance.now() - started;
      const s = await hview(r.structuredContent!.staged_id);
      expect(s.preview.current!.summary, mode).toContain(reason);
      // the bound, not the default 5 s: a hang or a flood costs the staging at most about READ_MS
      expect(took, mode).toBeLessThan(PREVIEW_LIMITS.readMs);
    }
    expect(await readFile(journal, 'utf8')).toBe('');
  }, 60_000);

  it("never calls a write at staging, not even the upstream's own dry run", async () => {
    const r = (await h.callTool({
      name: 'pok__edit_file',
      arguments: { path: '/x', edits: [{ oldText: 'contents', newText: 'CONTENTS' }], dryRun: true },
    })) as { structuredContent?: { staged_id: string } };
    const s = await hview(r.structuredContent!.staged_id);
    expect(s.preview.current!.summary).toBe('x: 1 line changed');
    expect(await readFile(journal, 'utf8')).toBe('');
  });
});
