import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IpcMainInvokeEvent } from 'electron';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IPC_AUDIT_SAVE_CHANNEL, type AuditSaveAnswer } from '../../main/contract/api.ts';
import type { AuditEntry } from '../../main/contract/audit.ts';
import type { Result } from '../../main/contract/errors.ts';
import { registerAuditSave } from '../../main/app/audit-save.ts';
import { createLogger } from '../../main/lib/logger.ts';
import { startService, type RunningService } from '../../main/service.ts';
import { AuditLog } from '../../main/store/audit/log.ts';

/**
 * Issue 30, item 10: the desktop console's export held only the newest
 * 100,000 entries and said nothing. The main process now saves it through
 * the streaming `audit.export` of a real service: a log of 101,000 entries
 * is exported whole, as CSV and JSONL, to the path the save dialog gave.
 */
const TOTAL = 101_000;
let dir: string;
let out: string;
let svc: RunningService;
const handlers = new Map<string, (event: IpcMainInvokeEvent, raw: unknown) => Promise<unknown>>();
const ipcMain = {
  handle: (channel: string, fn: (event: IpcMainInvokeEvent, raw: unknown) => Promise<unknown>) =>
    void handlers.set(channel, fn),
  removeHandler: (channel: string) => void handlers.delete(channel),
};
const ourWindow = { id: 1 };
const event = (url = 'app://console/') =>
  ({ sender: ourWindow, senderFrame: { parent: null, url } }) as unknown as IpcMainInvokeEvent;
let picked: string | null = null;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-auditsave-'));
  out = await mkdtemp(join(tmpdir(), 'gh-auditsave-out-'));
  const quiet = createLogger({ level: 'error' });
  const log = await AuditLog.open({ dir: join(dir, 'audit'), log: quiet });
  const t0 = Date.now() - 3_600_000;
  for (let i = 0; i < TOTAL; i++) {
    const e: AuditEntry = {
      id: `01J${i.toString(36).padStart(10, '0')}`,
      at: new Date(t0 + i * 20).toISOString(),
      request_id: `req-${i}`,
      tool: 'pages_list',
      write: false,
      result: 'ok',
      error_code: null,
      source_plugin: 'site',
      feature_key: 'site.pages',
      site: null,
      token_id: null,
      token_preview: null,
      user_id: null,
      target: null,
      duration_ms: 1,
      client: 'test',
    };
    log.append(e);
    if ((i + 1) % 20_000 === 0) await log.flush();
  }
  await log.close();
  svc = await startService({ dataDir: dir, port: 0, vault: 'file', log: quiet, writeRuntimeFile: false });
  registerAuditSave({
    ipcMain,
    invoke: svc.invoke,
    owns: (c) => (c as unknown) === ourWindow,
    pickFile: async () => picked,
  });
}, 180_000);
afterAll(async () => {
  await svc?.stop();
  await rm(dir, { recursive: true, force: true });
  await rm(out, { recursive: true, force: true });
});

const save = (raw: unknown, e = event()) =>
  handlers.get(IPC_AUDIT_SAVE_CHANNEL)!(e, raw) as Promise<Result<AuditSaveAnswer>>;

describe('the desktop console audit export (main process)', () => {
  it('saves the whole log, past 100,000 entries, as JSONL and CSV, with no temp file left', async () => {
    picked = join(out, 'all.jsonl');
    const started = Date.now();
    const r = await save({ format: 'jsonl' });
    console.log(`[audit save] ${TOTAL} entries as JSONL in ${Date.now() - started} ms`);
    expect(r).toEqual({ ok: true, data: { saved: picked, entries: TOTAL } });
    const lines = (await readFile(picked, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(TOTAL);
    expect((JSON.parse(lines.at(-1)!) as AuditEntry).id).toBe(`01J${'0'.padStart(10, '0')}`);

    picked = join(out, 'all.csv');
    const csv = await save({ format: 'csv', tool: 'pages_list' });
    expect(csv).toEqual({ ok: true, data: { saved: picked, entries: TOTAL } });
    expect((await readFile(picked, 'utf8')).trimEnd().split('\r\n')).toHaveLength(TOTAL + 1);
    expect((await readdir(out)).sort()).toEqual(['all.csv', 'all.jsonl']);
  }, 120_000);

  it('a cancelled dialog saves nothing; a bad filter and a foreign sender are refused', async () => {
    picked = null;
    expect(await save({ format: 'csv' })).toEqual({ ok: true, data: { saved: null, entries: 0 } });
    expect(await save({ format: 'pdf' })).toMatchObject({ ok: false, code: 'invalid_value' });
    expect(await save({ format: 'csv' }, event('https://evil.example/'))).toMatchObject({
      ok: false,
      code: 'forbidden',
    });
  });
});
