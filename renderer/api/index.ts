import { actionRequest, type Api, type AuditQueryInput } from '../../main/contract/index.ts';
import type { AuditExportSaved } from '../../main/contract/api.ts';
import type { Result } from '../../main/contract/errors.ts';
import { createElectronApi } from './electron-client.ts';
import { createRestApi, defaultBaseUrl } from './rest-client.ts';

export type ExportFormat = 'csv' | 'jsonl';

/** What the console needs from where it runs: the Api and, in a browser, download links. */
export interface ConsoleEnv {
  mode: 'electron' | 'browser';
  api: Api;
  /**
   * A link the browser downloads the audit export from, or null when there is
   * no HTTP server to ask (Electron): then `saveExport` has the app write it.
   */
  exportHref(format: ExportFormat, filters: AuditQueryInput): string | null;
  /** Electron: the main process streams the same export into a file the person chooses (the whole log, never built here). */
  saveExport?: (format: ExportFormat, filters: AuditQueryInput) => Promise<Result<AuditExportSaved>>;
}

/** The export's filters: the query's own, without its page. */
const exportFilters = (filters: AuditQueryInput) => {
  const { cursor: _cursor, limit: _limit, ...rest } = filters;
  return rest;
};

/** Electron when the preload put `window.gatehouse` there, else the admin REST of the page's own service. */
export function pickConsoleEnv(win: Window = window): ConsoleEnv {
  const desktop = win.gatehouse;
  if (desktop) {
    return {
      mode: 'electron',
      api: createElectronApi(desktop),
      exportHref: () => null,
      saveExport: async (format, filters) => {
        try {
          return await desktop.exportAuditFile({ format, ...exportFilters(filters) });
        } catch {
          return {
            ok: false,
            code: 'service_unavailable',
            message: 'The Gatehouse service inside the app is not answering.',
          };
        }
      },
    };
  }
  const baseUrl = defaultBaseUrl(win.location);
  return {
    mode: 'browser',
    api: createRestApi(baseUrl),
    exportHref: (format, filters) =>
      `${baseUrl}${actionRequest('audit.export', { format, ...exportFilters(filters) }).path}`,
  };
}
