import {
  actionRequest,
  type Api,
  type AuditQueryInput,
  type AuditSaveAnswer,
  type Result,
} from '../../main/contract/index.ts';
import { createElectronApi } from './electron-client.ts';
import { createRestApi, defaultBaseUrl } from './rest-client.ts';

export type ExportFormat = 'csv' | 'jsonl';

/** What the console needs from where it runs: the Api and, in a browser, download links. */
export interface ConsoleEnv {
  mode: 'electron' | 'browser';
  api: Api;
  /**
   * A link the browser downloads the audit export from, or null when there is
   * no HTTP server to ask (Electron): the console then builds the file itself.
   */
  exportHref(format: ExportFormat, filters: AuditQueryInput): string | null;
  /** Electron: the main process asks where and saves the whole export there (main/app/audit-save.ts). */
  saveExport?(format: ExportFormat, filters: AuditQueryInput): Promise<Result<AuditSaveAnswer>>;
}

/** Electron when the preload put `window.gatehouse` there, else the admin REST of the page's own service. */
export function pickConsoleEnv(win: Window = window): ConsoleEnv {
  if (win.gatehouse) {
    const bridge = win.gatehouse;
    return {
      mode: 'electron',
      api: createElectronApi(bridge),
      exportHref: () => null,
      ...(typeof bridge.saveAudit === 'function'
        ? {
            saveExport: async (format: ExportFormat, filters: AuditQueryInput) => {
              const { cursor: _cursor, limit: _limit, ...rest } = filters;
              try {
                return await bridge.saveAudit!({ format, ...rest });
              } catch {
                return {
                  ok: false as const,
                  code: 'service_unavailable' as const,
                  message: 'The Gatehouse service inside the app is not answering.',
                };
              }
            },
          }
        : {}),
    };
  }
  const baseUrl = defaultBaseUrl(win.location);
  return {
    mode: 'browser',
    api: createRestApi(baseUrl),
    exportHref: (format, filters) => {
      const { cursor: _cursor, limit: _limit, ...rest } = filters;
      return `${baseUrl}${actionRequest('audit.export', { format, ...rest }).path}`;
    },
  };
}
