import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StagedPayload } from '../../main/contract/staged.ts';
import { PRINCIPALS } from '../../main/contract/principal.ts';
import { StagedFiles } from '../../main/store/staged-files.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { strictJsonProblems } from '../helpers/strict-json.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-staged-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const record = (id: string, over: Partial<StagedPayload> = {}): StagedPayload => ({
  id,
  tool: 'pages_create',
  plugin: 'site',
  payload: { title: 'x' },
  preview: { summary: 's', kind: 'diff', changes: [] },
  user_id: 'usr_1',
  token_id: 'tok_1',
  token_label: 'a',
  client: 'c',
  request_id: 'r',
  created: '2026-01-01T00:00:00.000Z',
  expires_at: '2026-01-01T00:15:00.000Z',
  payload_hash: 'h',
  target: null,
  target_version: null,
  status: 'pending',
  decided_at: null,
  decided_by: null,
  error_code: null,
  client_source: null,
  ...over,
});

describe('StagedFiles: one file per staged write', () => {
  it('writes each record to its own 0600 file, reloads them, and removes one without touching the others', async () => {
    const staged = join(dir, 'staged');
    const a = await StagedFiles.open({ dir: staged, log: silentLogger });
    await a.put(record('stg_aaaa1'));
    await a.put(record('stg_bbbb2', { status: 'confirmed', result: { ok: true } }));
    await a.put(
      record('stg_aaaa1', {
        status: 'applying',
        decided_by: PRINCIPALS.cliDirect,
        decided_at: '2026-01-01T00:01:00.000Z',
      }),
    );
    await a.remove('stg_bbbb2');
    await a.remove('stg_gone1');
    expect((await readdir(staged)).sort()).toEqual(['stg_aaaa1.json']);
    const b = await StagedFiles.open({ dir: staged, log: silentLogger });
    expect(b.loaded().map((r) => [r.id, r.status])).toEqual([['stg_aaaa1', 'applying']]);
    expect(b.loaded()).toEqual([]); // handed over once
    expect(b.problems).toEqual([]);
  });

  it('moves a damaged file aside and reports it, ignores names that are not staged ids, and removes dead temp files', async () => {
    const staged = join(dir, 'staged');
    const a = await StagedFiles.open({ dir: staged, log: silentLogger });
    await a.put(record('stg_good1'));
    await writeFile(join(staged, 'stg_bad01.json'), '{"id": "stg_bad01", "tool":');
    await writeFile(join(staged, 'stg_other.json'), JSON.stringify(record('stg_else1')));
    await writeFile(join(staged, 'notes.txt'), 'hello');
    await writeFile(join(staged, '.stg_new01.json.tmp-999999999-abcdef'), '{"half');
    const b = await StagedFiles.open({ dir: staged, log: silentLogger });
    expect(b.loaded().map((r) => r.id)).toEqual(['stg_good1']);
    expect(b.problems).toHaveLength(2);
    expect(b.problems.join('\n')).toMatch(/stg_bad01\.json is not valid JSON; moved it to .*stg_bad01\.json\.corrupt-/);
    expect(b.problems.join('\n')).toMatch(/stg_other\.json is named stg_other but holds 'stg_else1'/);
    const names = await readdir(staged);
    expect(names).toContain('notes.txt');
    expect(names.some((n) => n.includes('.tmp-'))).toBe(false);
  });

  it('writes text jq can read, even from lone surrogates in client strings', async () => {
    const staged = join(dir, 'staged');
    const a = await StagedFiles.open({ dir: staged, log: silentLogger });
    await a.put(record('stg_surr1', { client: 'bad \ud800 client', payload: { ['k\udc00']: 'v\ud83d' } }));
    expect(await strictJsonProblems([join(staged, 'stg_surr1.json')])).toEqual([]);
    const back = JSON.parse(await readFile(join(staged, 'stg_surr1.json'), 'utf8')) as StagedPayload;
    expect([back.client, Object.keys(back.payload), back.payload['k\ufffd']]).toEqual([
      'bad \ufffd client',
      ['k\ufffd'],
      'v\ufffd',
    ]);
  });

  it('never turns anything but a staged id into a path', async () => {
    const a = await StagedFiles.open({ dir: join(dir, 'staged'), log: silentLogger });
    await expect(a.put(record('../../etc/x'))).rejects.toThrow(/not a staged write id/);
  });
});
