import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StagedPayload } from '../../main/contract/staged.ts';
import { PRINCIPALS } from '../../main/contract/principal.ts';

/** What versions before principals wrote into decided_by: a plain string. */
const LEGACY_ADMIN = 'admin' as unknown as StagedPayload['decided_by'];
import { openLocalCore, type LocalCore } from '../../main/local-core.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { filesUnder } from '../cli/cli-harness.ts';
import { strictJsonProblems } from '../helpers/strict-json.ts';

// What the gateway makes of the data it finds at start: damaged documents are
// salvaged field by field (and said so), a corrupt site is never re-seeded,
// and staged writes of an earlier version move out of options.json.

let dir: string;
const open: LocalCore[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-startup-'));
});
afterEach(async () => {
  for (const g of open.splice(0)) await g.close();
  await rm(dir, { recursive: true, force: true });
});

async function start(): Promise<LocalCore> {
  const gw = await openLocalCore({ dataDir: dir, vault: 'file', log: silentLogger });
  open.push(gw);
  return gw;
}
async function stop(gw: LocalCore): Promise<void> {
  open.splice(open.indexOf(gw), 1);
  await gw.close();
}
const readJson = async (name: string) => JSON.parse(await readFile(join(dir, name), 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('a damaged options.json', () => {
  it('keeps every valid setting, user and token, drops only the bad parts, keeps the original, and says what was dropped', async () => {
    const first = await start();
    const admin = first.users.list()[0]!;
    await first.users.add('editor1', 'editor');
    await first.tokens.create('kept token', admin);
    await first.tokens.create('second token', admin);
    await first.settings.update({ enabled: true, rate_limit: 30, cors: ['http://localhost:5173'] });
    await stop(first);

    const doc = await readJson('options.json');
    doc.settings.rate_limit = 'fast';
    doc.users[1].role = 'overlord';
    doc.tokens[1].hash = 'not-a-hash';
    const original = `${JSON.stringify(doc, null, 2)}\n`;
    await writeFile(join(dir, 'options.json'), original);

    const gw = await start();
    expect(gw.settings.get()).toMatchObject({ enabled: true, rate_limit: 1200, cors: ['http://localhost:5173'] });
    expect(gw.users.list().map((u) => u.login)).toEqual(['admin']);
    expect(gw.tokens.list().map((t) => t.label)).toEqual(['kept token']);
    expect(gw.options.salvaged?.dropped).toEqual(['settings.rate_limit', 'users[1]', 'tokens[1]']);
    expect(await readFile(gw.options.salvaged!.backup, 'utf8')).toBe(original);
    const warning = gw.health().warnings.find((w) => w.code === 'store_salvaged');
    expect(warning?.message).toMatch(
      /Dropped: settings\.rate_limit, users\[1\], tokens\[1\]\. The original is in .*options\.json\.corrupt-/,
    );
    // the site was not touched
    expect(gw.siteStore.salvaged).toBeNull();
    expect(gw.site.identity()).toBeTruthy();
  });
});

describe('a damaged site.json', () => {
  it('that is not JSON is moved aside and the site is never re-seeded over it, now or at the next start', async () => {
    const first = await start();
    expect(first.siteStore.read().pages.length).toBeGreaterThan(0);
    await stop(first);
    await writeFile(join(dir, 'site.json'), '{"pages": [');

    const gw = await start();
    expect(gw.siteStore.corruptBackup).toMatch(/site\.json\.corrupt-/);
    expect(gw.siteStore.read().pages).toEqual([]);
    expect(gw.health().warnings.map((w) => w.code)).toContain('store_corrupt');
    await stop(gw);
    const again = await start();
    expect(again.siteStore.read().pages).toEqual([]);
  });

  it('with one bad page keeps the others and does not seed', async () => {
    const first = await start();
    const count = first.siteStore.read().pages.length;
    await stop(first);
    const doc = await readJson('site.json');
    doc.pages[0].status = 'maybe';
    await writeFile(join(dir, 'site.json'), JSON.stringify(doc));
    const gw = await start();
    expect(gw.siteStore.read().pages.length).toBe(count - 1);
    expect(gw.siteStore.salvaged?.dropped).toEqual(['pages[0]']);
  });
});

describe('staged writes of an earlier version', () => {
  it('move from options.json into staged/ at the first start, keep their state, and can still be decided', async () => {
    const first = await start();
    const pageId = first.siteStore.read().pages[0]!.id;
    const admin = first.users.list()[0]!;
    await stop(first);
    const now = Date.now();
    const base = {
      tool: 'pages_publish',
      plugin: 'site',
      preview: { summary: 'old', kind: 'diff' as const, changes: [] },
      user_id: admin.id,
      token_id: null,
      token_label: null,
      client: null,
      request_id: null,
      target: `page:${pageId}`,
      target_version: 1,
      decided_at: null,
      decided_by: null,
      error_code: null,
      client_source: null,
    };
    const { canonicalJson } = await import('../../main/core/staging/staging.ts');
    const { createHash } = await import('node:crypto');
    const payload = { id: pageId, base_version: 1, status: 'draft' };
    const pending: StagedPayload = {
      ...base,
      id: 'stg_legacypend',
      payload,
      payload_hash: createHash('sha256').update(canonicalJson(payload)).digest('hex'),
      created: new Date(now).toISOString(),
      expires_at: new Date(now + 600_000).toISOString(),
      status: 'pending',
    };
    const decided: StagedPayload = {
      ...base,
      id: 'stg_legacydone',
      payload: {},
      payload_hash: 'x',
      created: new Date(now - 10_000).toISOString(),
      expires_at: new Date(now).toISOString(),
      status: 'discarded',
      decided_at: new Date(now - 5_000).toISOString(),
      decided_by: LEGACY_ADMIN,
    };
    const doc = await readJson('options.json');
    doc.transients = {
      'staged:stg_legacypend': { value: pending, expires_at: now + 600_000 },
      other: { value: 1, expires_at: now + 600_000 },
    };
    doc.staged_history = [decided];
    await writeFile(join(dir, 'options.json'), JSON.stringify(doc));

    const gw = await start();
    expect((await readdir(join(dir, 'staged'))).sort()).toEqual(['stg_legacydone.json', 'stg_legacypend.json']);
    const after = await readJson('options.json');
    expect(Object.keys(after.transients)).toEqual(['other']);
    expect(after.staged_history).toEqual([]);
    expect(gw.staging.list().map((s) => [s.id, s.status])).toEqual([
      ['stg_legacypend', 'pending'],
      ['stg_legacydone', 'discarded'],
    ]);
    // the old record's decider, a plain string then, reads as a legacy principal
    expect(gw.staging.get('stg_legacydone').decided_by).toEqual({ kind: 'legacy', label: 'admin' });
    const done = await gw.staging.confirm('stg_legacypend', { kind: 'person', principal: PRINCIPALS.cliDirect });
    expect(done.status).toBe('confirmed');
    expect(gw.siteStore.read().pages.find((p) => p.id === pageId)?.status).toBe('draft');
  });
});

describe('every file the gateway writes', () => {
  it('is strict JSON (jq reads it), lone surrogates in client strings included', async () => {
    const gw = await start();
    const admin = gw.users.list()[0]!;
    await gw.tokens.create('label \ud800 cut', admin);
    gw.auditor.record({ tool: 'x\udc00', write: false, result: 'denied' }, { principal: null, client: 'cl\ud83dient' });
    await gw.audit.sync();
    await stop(gw);
    const files = (await filesUnder(dir)).filter((f) => /\.jsonl?$/.test(f));
    expect(files.length).toBeGreaterThan(3);
    expect(await strictJsonProblems(files)).toEqual([]);
  });
});
