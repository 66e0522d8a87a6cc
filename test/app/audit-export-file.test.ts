import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { AUDIT_EXPORT_FILE_CHANNEL } from '../../main/contract/api.ts';
import { openLocalCore } from '../../main/local-core.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { makeAudit } from '../renderer/fake-api.ts';
import { cleanedUp } from '../cli/cli-harness.ts';

vi.mock('electron', () => import('./electron-mock.ts'));
const electron = await import('./electron-mock.ts');
const { ConsoleWindows } = await import('../../main/app/window.ts');
const { registerAuditExportFile } = await import('../../main/app/audit-export-file.ts');

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

// More entries than the console's own export used to stop at (100,000), so a cap anywhere shows.
const ENTRIES = 100_250;
const scope = cleanedUp();
let gw: Awaited<ReturnType<typeof openLocalCore>>;
let out: string;
let chosen: string | null;

beforeAll(async () => {
  const dir = await scope.dir();
  out = await scope.dir();
  gw = await openLocalCore({ dataDir: dir, vault: 'file', log: silentLogger });
  for (let i = 0; i < ENTRIES; i++) gw.audit.append(makeAudit(i, { id: `aud_${String(i).padStart(6, '0')}` }));
  await gw.audit.flush();
});
afterAll(async () => gw?.close());

let windows: InstanceType<typeof ConsoleWindows>;
beforeEach(() => {
  electron.resetElectron();
  windows = new ConsoleWindows({ preload: '/p.cjs' });
  registerAuditExportFile({
    ipcMain: electron.ipcMain as never,
    invoke: gw.invoke,
    owns: (c) => windows.owns(c),
    choosePath: async () => chosen,
  });
});

/** An invoke from our console window's top frame. */
function ours() {
  windows.show();
  const win = electron.BrowserWindow.created[0]!;
  return { sender: win.webContents, senderFrame: win.webContents.mainFrame };
}

describe("the desktop console's audit export", () => {
  it('writes the whole log, past 100,000 entries, into the file the person chose', async () => {
    chosen = join(out, 'all.jsonl');
    const r = await electron.ipcMain.invoke(AUDIT_EXPORT_FILE_CHANNEL, ours(), { format: 'jsonl' });
    expect(r).toMatchObject({ ok: true, data: { path: chosen } });
    const text = await readFile(chosen, 'utf8');
    expect((r as { data: { bytes: number } }).data.bytes).toBe(Buffer.byteLength(text));
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(ENTRIES);
    expect(new Set(lines.map((l) => (JSON.parse(l) as { id: string }).id)).size).toBe(ENTRIES);
  });

  it("exports the filtered log as CSV, and the console's filters are the service's", async () => {
    chosen = join(out, 'writes.csv');
    const r = await electron.ipcMain.invoke(AUDIT_EXPORT_FILE_CHANNEL, ours(), { format: 'csv', tool: 'pages_update' });
    expect(r).toMatchObject({ ok: true });
    const rows = (await readFile(chosen, 'utf8')).trimEnd().split('\r\n');
    expect(rows[0]).toMatch(/^id,at,request_id,tool,/);
    expect(rows).toHaveLength(1 + Math.ceil(ENTRIES / 2));
  });

  it('writes nothing when the person cancels, and refuses a bad filter with the reason', async () => {
    chosen = null;
    const before = await readdir(out);
    expect(await electron.ipcMain.invoke(AUDIT_EXPORT_FILE_CHANNEL, ours(), { format: 'csv' })).toEqual({
      ok: true,
      data: { path: null, bytes: 0 },
    });
    expect(await readdir(out)).toEqual(before);
    expect(await electron.ipcMain.invoke(AUDIT_EXPORT_FILE_CHANNEL, ours(), { format: 'xls' })).toMatchObject({
      ok: false,
      code: 'invalid_value',
      message: expect.stringContaining('format'),
    });
  });

  it('leaves no half-written file when the file cannot be put in place, and says where it failed', async () => {
    // A folder under the chosen name: the export is written beside it in full, then cannot be renamed onto it.
    const parent = join(out, 'taken');
    chosen = join(parent, 'x.csv');
    await mkdir(chosen, { recursive: true });
    const r = await electron.ipcMain.invoke(AUDIT_EXPORT_FILE_CHANNEL, ours(), { format: 'csv' });
    expect(r).toMatchObject({ ok: false, code: 'storage_unavailable', message: expect.stringContaining(chosen) });
    expect(await readdir(parent)).toEqual(['x.csv']);
    expect(await readdir(chosen)).toEqual([]);
  });

  it('refuses a window it did not create', async () => {
    const stranger = new electron.FakeWebContents();
    stranger.mainFrame.url = 'app://console/index.html';
    chosen = join(out, 'never.csv');
    const r = await electron.ipcMain.invoke(
      AUDIT_EXPORT_FILE_CHANNEL,
      { sender: stranger, senderFrame: stranger.mainFrame },
      {
        format: 'csv',
      },
    );
    expect(r).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await readdir(out)).not.toContain('never.csv');
  });
});
