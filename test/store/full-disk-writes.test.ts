import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, truncate, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagedPayload } from '../../main/contract/staged.ts';
import { createLogger } from '../../main/lib/logger.ts';
import { startService } from '../../main/service.ts';
import { runCli } from '../cli/cli-harness.ts';
import { connectClient } from '../helpers/service.ts';

/**
 * The data dir on a real tmpfs that fills up.
 * Every stage and confirm the full disk refuses answers `storage_unavailable`
 * (the staged write's own file refusing used to surface as internal_error),
 * and once space is back each write confirms once. A start on the full disk
 * says in one sentence which dir and how much it needs, exits 1 without a
 * stack, and leaves no `gatehouse.lock.*.tmp` behind.
 */
let dir: string;
const FILLER = 'filler.bin';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-fullw-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir]);
});
afterAll(async () => {
  if (!dir) return;
  execFileSync('umount', [dir]);
  await rm(dir, { recursive: true, force: true });
});

/** Writes until the file system refuses: every block of the tmpfs is taken (as test/cloud-client/full-disk.test.ts). */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(64 * 1024, 1));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  }
  try {
    for (;;) writeSync(fd, Buffer.alloc(512, 1));
  } catch {
    // the last bytes: full
  } finally {
    closeSync(fd);
  }
}

type Answer = {
  isError?: boolean;
  structuredContent?: { staged_id?: string };
  _meta?: { 'gatehouse/error'?: { code: string } };
};

describe('a full disk', () => {
  it('refuses every stage and confirm with storage_unavailable; once space is back each write confirms once', async () => {
    const data = join(dir, 'svc');
    let logs = '';
    const log = createLogger({
      level: 'info',
      stream: new Writable({ write: (c, _e, cb) => ((logs += String(c)), cb()) }),
    });
    const svc = await startService({
      dataDir: data,
      port: 0,
      vault: 'file',
      enable: true,
      log,
      writeRuntimeFile: false,
    });
    try {
      await svc.core.settings.update({ rate_limit: 0 });
      const { token } = await svc.createToken({ label: 'agent' });
      const client = await connectClient(svc.mcpUrl, token);
      const stage = async (i: number) =>
        (await client.callTool({
          name: 'pages_create',
          arguments: { title: `Page ${i}`, slug: `page-${i}` },
        })) as Answer;
      const early: string[] = [];
      for (let i = 0; i < 3; i++) early.push((await stage(i)).structuredContent!.staged_id!);

      fillDisk(join(dir, FILLER));
      const refusals: string[] = [];
      const staged: string[] = [];
      for (let i = 10; i < 60 && refusals.length < 8; i++) {
        const r = await stage(i);
        if (r.isError) refusals.push(r._meta?.['gatehouse/error']?.code ?? 'none');
        else staged.push(r.structuredContent!.staged_id!);
      }
      const confirms: string[] = [];
      for (const id of early) {
        const r = await svc.dispatch('staged.confirm', { id });
        confirms.push(r.ok ? 'ok' : r.code);
      }
      console.log(`[full disk] stage refusals: ${refusals.join(',')}; confirms: ${confirms.join(',')}`);
      expect(refusals.length).toBeGreaterThan(0);
      expect(new Set(refusals)).toEqual(new Set(['storage_unavailable']));
      expect(confirms.filter((c) => c !== 'ok').length).toBeGreaterThan(0);
      expect(new Set(confirms.filter((c) => c !== 'ok'))).toEqual(new Set(['storage_unavailable']));
      expect(logs).not.toMatch(/internal error|"internal_error"/);

      await unlink(join(dir, FILLER));
      for (const id of [...early, ...staged]) {
        const r = await svc.dispatch('staged.confirm', { id });
        expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
        expect((r as { data: StagedPayload }).data.status).toBe('confirmed');
      }
      const pages = (await client.callTool({ name: 'pages_list', arguments: { limit: 100 } })) as {
        structuredContent: { pages: Array<{ slug: string }> };
      };
      const slugs = pages.structuredContent.pages.map((p) => p.slug);
      expect(slugs.filter((s) => s === 'page-0')).toHaveLength(1);
      await client.close();
    } finally {
      await svc.stop().catch(() => undefined);
    }
  }, 120_000);

  it('a start on the full disk says which dir and how much it needs in one sentence, exits 1, and leaves no lock temp', async () => {
    const data = join(dir, 'start');
    // a data dir that exists, with room for nothing more
    expect((await runCli(['settings', 'get', '--data-dir', data, '--vault', 'file', '--json'])).code).toBe(0);
    fillDisk(join(dir, FILLER));
    try {
      const r = await runCli(['serve', '--port', '0', '--data-dir', data, '--vault', 'file']);
      console.log(`[full disk] start: exit ${r.code}; ${r.stderr.trim()}`);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(`cannot start on ${data}: its disk is full (ENOSPC`);
      expect(r.stderr).toContain('needs at least 1 MiB free there');
      expect(r.stderr).toContain('[storage_unavailable]');
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect((await readdir(data)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
      expect(await readdir(data)).not.toContain('gatehouse.lock');
    } finally {
      await unlink(join(dir, FILLER));
    }
  }, 120_000);

  it('a fresh start with room for its lock and nothing more: the same one sentence, and the lock is let go', async () => {
    const data = join(dir, 'fresh');
    fillDisk(join(dir, FILLER));
    // one page back: the lock fits, the first settings file does not
    await truncate(join(dir, FILLER), (await stat(join(dir, FILLER))).size - 4096);
    try {
      const r = await runCli(['serve', '--port', '0', '--data-dir', data, '--vault', 'file']);
      console.log(`[full disk] fresh start: exit ${r.code}; ${r.stderr.trim()}`);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(`cannot start on ${data}: its disk is full (ENOSPC`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect((await readdir(data)).filter((n) => n.endsWith('.tmp') || n.includes('.tmp-'))).toEqual([]);
      expect(await readdir(data)).not.toContain('gatehouse.lock');
    } finally {
      await unlink(join(dir, FILLER));
    }
  }, 120_000);
});
