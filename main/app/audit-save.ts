import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import { IPC_AUDIT_SAVE_CHANNEL, type AuditSaveAnswer } from '../contract/api.ts';
import type { Result } from '../contract/errors.ts';
import { PRINCIPALS } from '../contract/principal.ts';
import type { Invoke } from '../core/admin/invoke.ts';
import { isTrustedSender } from './ipc.ts';

export interface AuditSaveDeps {
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>;
  /** the core's one action path: `audit.export` as the console in the app's window */
  invoke: Invoke;
  owns: (contents: WebContents) => boolean;
  /** the save dialog (desktop.ts): a path, or null when the person cancelled */
  pickFile: (event: IpcMainInvokeEvent, suggestedName: string) => Promise<string | null>;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/**
 * The desktop console's audit export: the same streaming `audit.export` the
 * browser's link and the CLI use, written by the main process to the file
 * the person picks. The whole log, however long (the page paging through
 * `audit.query` stopped at 100,000 entries and said nothing). Written to a
 * temp file beside it and renamed, so a failed export leaves no half file.
 */
export function registerAuditSave(deps: AuditSaveDeps): () => void {
  deps.ipcMain.handle(IPC_AUDIT_SAVE_CHANNEL, async (event, raw: unknown): Promise<Result<AuditSaveAnswer>> => {
    if (!isTrustedSender(event, deps.owns)) {
      deps.log?.('ipc: refused a message from an unknown sender', { action: 'audit.save' });
      return { ok: false, code: 'forbidden', message: 'this window may not call Gatehouse' };
    }
    const r = await deps.invoke('audit.export', raw, PRINCIPALS.appConsole);
    if (!r.ok) return r;
    const path = await deps.pickFile(event, r.data.filename);
    if (!path) return { ok: true, data: { saved: null, entries: 0 } };
    const temp = `${path}.${process.pid}.partial`;
    try {
      const out = createWriteStream(temp, { mode: 0o600 });
      const entries = Number(await r.data.write(out));
      out.end();
      await finished(out);
      await rename(temp, path);
      return { ok: true, data: { saved: path, entries } };
    } catch (e) {
      await unlink(temp).catch(() => undefined);
      const code = (e as NodeJS.ErrnoException).code;
      deps.log?.('audit export: could not save', { error: (e as Error).message });
      return {
        ok: false,
        code: code === 'ENOSPC' || code === 'EDQUOT' || code === 'EIO' ? 'storage_unavailable' : 'internal_error',
        message: `The export could not be saved (${code ?? (e as Error).message}); nothing was written.`,
      };
    }
  });
  return () => deps.ipcMain.removeHandler(IPC_AUDIT_SAVE_CHANNEL);
}
