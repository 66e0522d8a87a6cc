import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import { AUDIT_EXPORT_FILE_CHANNEL, type AuditExportSaved, type Download } from '../contract/api.ts';
import type { Result } from '../contract/errors.ts';
import { PRINCIPALS } from '../contract/principal.ts';
import type { Invoke } from '../core/admin/invoke.ts';
import { isTrustedSender } from './ipc.ts';

export interface AuditExportFileDeps {
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>;
  invoke: Invoke;
  owns: (contents: WebContents) => boolean;
  /** the save dialog: the path the person chose for the suggested file name, or null when they cancelled */
  choosePath: (suggestedName: string) => Promise<string | null>;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/**
 * The desktop console's audit export. A browser downloads the service's
 * streaming export (GET audit/export); the app's window has no HTTP server to
 * download from, so the main process runs that same export into the file the
 * person chose: the whole log, however long, never held in memory, and never
 * a half-written file under the chosen name (it is written beside it and
 * renamed once complete).
 */
export function registerAuditExportFile(deps: AuditExportFileDeps): () => void {
  deps.ipcMain.handle(
    AUDIT_EXPORT_FILE_CHANNEL,
    async (event: IpcMainInvokeEvent, raw: unknown): Promise<Result<AuditExportSaved>> => {
      if (!isTrustedSender(event, deps.owns)) {
        deps.log?.('ipc: refused an audit export from an unknown sender', { url: event.senderFrame?.url ?? null });
        return { ok: false, code: 'forbidden', message: 'this window may not call Gatehouse' };
      }
      const r = await deps.invoke('audit.export', raw, PRINCIPALS.appConsole);
      if (!r.ok) return r;
      const path = await deps.choosePath(r.data.filename);
      if (!path) return { ok: true, data: { path: null, bytes: 0 } };
      try {
        return { ok: true, data: { path, bytes: await writeWhole(r.data, path) } };
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        deps.log?.('audit export failed', { error: (e as Error).message });
        return {
          ok: false,
          code: 'storage_unavailable',
          message: `the export could not be written to ${path}${code ? ` (${code})` : ''}; nothing was saved there`,
        };
      }
    },
  );
  return () => deps.ipcMain.removeHandler(AUDIT_EXPORT_FILE_CHANNEL);
}

async function writeWhole(download: Download, path: string): Promise<number> {
  const partial = join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
  const out = createWriteStream(partial, { flags: 'wx', mode: 0o600 });
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  try {
    await Promise.race([download.write(out), failed]);
    await Promise.race([new Promise<void>((resolve) => out.end(resolve)), failed]);
    await rename(partial, path);
    return out.bytesWritten;
  } catch (e) {
    out.destroy();
    await rm(partial, { force: true });
    throw e;
  }
}
