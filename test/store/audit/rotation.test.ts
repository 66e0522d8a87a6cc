import { appendFile, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../main/contract/audit.ts';
import { AuditHarness, entry, ids, T0 } from './fixtures.ts';

let h: AuditHarness;
beforeEach(async () => {
  h = await new AuditHarness().init();
});
afterEach(async () => {
  await h.cleanup();
});

const DAY = 86_400_000;
const jsonlFiles = async () => (await readdir(h.dir)).filter((n) => n.endsWith('.jsonl')).sort();
const lineBytes = (e: AuditEntry) => Buffer.byteLength(`${JSON.stringify(e)}\n`);

describe('AuditLog rotation', () => {
  it('rolls over before a file would pass maxFileBytes and never splits an entry', async () => {
    const max = 4_000;
    const log = await h.open({ maxFileBytes: max });
    const all: AuditEntry[] = [];
    for (let i = 0; i < 300; i++) {
      // uneven sizes so lines do not tile the limit
      const e = entry(i, { target: 'x'.repeat((i * 37) % 400) });
      all.push(e);
      log.append(e);
      if (i % 50 === 0) await log.flush();
    }
    await log.close();

    const names = await jsonlFiles();
    expect(names.length).toBeGreaterThan(10);
    expect(names.map((n) => n.slice(-12))).toEqual(names.map((_, i) => `${String(i + 1).padStart(6, '0')}.jsonl`));
    const perFile: AuditEntry[][] = [];
    for (const n of names) {
      const text = await readFile(join(h.dir, n), 'utf8');
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(max);
      expect(text.endsWith('\n')).toBe(true);
      perFile.push(
        text
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as AuditEntry),
      );
    }
    expect(perFile.flat()).toEqual(all);
    // Each roll-over happened because the next entry would not have fit.
    for (let i = 0; i + 1 < perFile.length; i++) {
      const used = perFile[i]?.reduce((s, e) => s + lineBytes(e), 0) ?? 0;
      expect(used + lineBytes(perFile[i + 1]?.[0] as AuditEntry)).toBeGreaterThan(max);
    }
  });

  it('gives an entry larger than the limit a file of its own', async () => {
    const log = await h.open({ maxFileBytes: 1_000 });
    log.append(entry(1));
    log.append(entry(2, { target: 'y'.repeat(5_000) }));
    log.append(entry(3));
    await log.flush();
    const names = await jsonlFiles();
    expect(names).toHaveLength(3);
    const sizes = await Promise.all(names.map(async (n) => (await stat(join(h.dir, n))).size));
    expect(sizes[1]).toBeGreaterThan(5_000);
    expect(ids((await log.query({})).entries)).toEqual(['e000003', 'e000002', 'e000001']);
  });

  it('writes a summary beside each closed file and rebuilds one that is missing, corrupt or stale', async () => {
    const log = await h.open({ maxFileBytes: 2_000 });
    for (let i = 0; i < 40; i++) log.append(entry(i, { tool: i === 7 ? 'rare.tool' : 'common.tool' }));
    await log.close();
    const sidecars = (await readdir(h.dir)).filter((n) => n.endsWith('.summary.json')).sort();
    expect(sidecars).toHaveLength((await jsonlFiles()).length);
    await writeFile(join(h.dir, sidecars[0] as string), '{"v":1,"garbage":');
    await rm(join(h.dir, sidecars[1] as string));
    // Make a sidecar lie about its file: the size check must catch it.
    const names = await jsonlFiles();
    await appendFile(join(h.dir, names[2] as string), `${JSON.stringify(entry(1000, { tool: 'rare.tool' }))}\n`);

    const again = await h.open({ maxFileBytes: 2_000 });
    expect(ids((await again.query({ tool: 'rare.tool' })).entries)).toEqual(['e001000', 'e000007']);
    expect((await again.query({ limit: 1000 })).entries).toHaveLength(41);
  });
});

describe('AuditLog retention sweep', () => {
  const dayEntry = (day: number, k: number) =>
    entry(day * 100 + k, { at: new Date(T0 + day * DAY + k * 1000).toISOString() });
  /** Room for five entries a file, so each day below gets a file of its own. */
  const MAX = 5 * lineBytes(dayEntry(2, 4));

  /** Three days of entries, written by three runs of the service, one file per day. */
  async function threeDays(): Promise<void> {
    for (let day = 0; day < 3; day++) {
      h.clock.ms = T0 + day * DAY;
      const log = await h.open({ maxFileBytes: MAX });
      for (let k = 0; k < 5; k++) log.append(dayEntry(day, k));
      await log.close();
    }
  }

  it('deletes only the files whose newest entry is older than the retention, read live from settings', async () => {
    await threeDays();
    const retention = { days: 10 };
    const log = await h.open({ retentionDays: () => retention.days, maxFileBytes: MAX });
    expect((await jsonlFiles()).map((n) => n.slice(6, 14))).toEqual(['20261101', '20261102', '20261103']);

    h.clock.ms = T0 + 2 * DAY + 3_000;
    expect(await log.sweep()).toBe(0);
    retention.days = 1; // the setting changed: the next sweep honours it without a reopen
    // day 0 ended two days ago; day 1's newest entry is 1 s younger than the cutoff
    expect(await log.sweep()).toBe(1);
    expect((await jsonlFiles()).map((n) => n.slice(6, 14))).toEqual(['20261102', '20261103']);
    expect((await readdir(h.dir)).filter((n) => n.startsWith('audit-20261101'))).toEqual([]); // the sidecar went too
    const left = (await log.query({ limit: 100 })).entries;
    expect(ids(left)).toEqual([
      'e000204',
      'e000203',
      'e000202',
      'e000201',
      'e000200',
      'e000104',
      'e000103',
      'e000102',
      'e000101',
      'e000100',
    ]);
  });

  it('also retires and deletes the file being written when all of it has expired, and writes on in a new one', async () => {
    const log = await h.open({ retentionDays: () => 1 });
    log.append(entry(1));
    await log.flush();
    h.clock.ms = T0 + 3 * DAY;
    expect(await log.sweep()).toBe(1);
    expect(await jsonlFiles()).toEqual([]);
    log.append(entry(2, { at: new Date(h.clock.ms).toISOString() }));
    expect(ids((await log.query({})).entries)).toEqual(['e000002']);
    expect(await jsonlFiles()).toHaveLength(1);
  });

  it('under a size cap deletes the oldest files until the rest fit, never the one being written, read live', async () => {
    await threeDays();
    h.clock.ms = T0 + 2 * DAY + 3_000;
    const cap = { bytes: 0 };
    const log = await h.open({ maxTotalBytes: () => cap.bytes, maxFileBytes: MAX });
    const sizes = await Promise.all((await jsonlFiles()).map(async (n) => (await stat(join(h.dir, n))).size));
    expect(sizes).toHaveLength(3);
    expect(await log.sweep()).toBe(0); // no cap: only the age limit (90 days) applies
    cap.bytes = sizes[1]! + sizes[2]!; // room for the two newest
    expect(await log.sweep()).toBe(1);
    expect((await jsonlFiles()).map((n) => n.slice(6, 14))).toEqual(['20261102', '20261103']);
    expect(ids((await log.query({ limit: 100 })).entries).at(-1)).toBe('e000100');
    cap.bytes = 1; // smaller than anything: every file but the one being written goes
    log.append(dayEntry(2, 9));
    await log.flush();
    expect(await log.sweep()).toBeGreaterThanOrEqual(1);
    const left = await jsonlFiles();
    expect(left).toHaveLength(1);
    expect(ids((await log.query({ limit: 100 })).entries)).toContain('e000209');
    expect(h.logger.records.some((r) => r.msg.includes('size cap'))).toBe(true);
  });

  it('ignores a retention that is not a positive number', async () => {
    const log = await h.open({ retentionDays: () => Number.NaN });
    log.append(entry(1));
    await log.flush();
    h.clock.ms = T0 + 1000 * DAY;
    expect(await log.sweep()).toBe(0);
    expect(await jsonlFiles()).toHaveLength(1);
    expect(h.logger.records.some((r) => r.level === 'warn' && r.msg.includes('retention'))).toBe(true);
    const throwing = await h.open({
      dir: `${h.dir}-2`,
      retentionDays: () => {
        throw new Error('settings unreadable');
      },
    });
    await expect(throwing.sweep()).resolves.toBe(0);
  });
});

describe('AuditLog write failures', () => {
  it('logs a failed write, keeps the entries queued and writes them once the disk is back', async () => {
    // maxFileBytes 1: each entry needs a new file, so a folder that cannot take files fails the write.
    const log = await h.open({ maxFileBytes: 1 });
    log.append(entry(1));
    await log.flush();
    await rename(h.dir, `${h.dir}.away`);
    await writeFile(h.dir, 'not a folder');

    log.append(entry(2));
    log.append(entry(3));
    await expect(log.flush()).rejects.toThrow();
    const failure = h.logger.records.find((r) => r.level === 'error' && r.msg.includes('write failed'));
    expect(failure?.fields).toMatchObject({ queued: 2 });

    await rm(h.dir);
    await rename(`${h.dir}.away`, h.dir);
    await log.flush();
    expect(ids((await log.query({})).entries)).toEqual(['e000003', 'e000002', 'e000001']);
    await log.close();
    const again = await h.open();
    expect(ids((await again.query({})).entries)).toEqual(['e000003', 'e000002', 'e000001']);
  });

  it('close on a broken disk rejects and says how many entries were lost', async () => {
    const log = await h.open({ maxFileBytes: 1 });
    log.append(entry(1));
    await log.flush();
    await rename(h.dir, `${h.dir}.away`);
    await writeFile(h.dir, 'not a folder');
    log.append(entry(2));
    await expect(log.close()).rejects.toThrow();
    expect(h.logger.records.find((r) => r.msg.includes('lost'))?.fields).toMatchObject({ lost: 1 });
    await rm(h.dir);
    await rename(`${h.dir}.away`, h.dir);
  });
});
