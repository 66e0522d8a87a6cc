import { actionRequest, type Api, type AuditQueryInput } from '../../main/contract/index.ts';
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
}

/** Electron when the preload put `window.gatehouse` there, else the admin REST of the page's own service. */
export function pickConsoleEnv(win: Window = window): ConsoleEnv {
  if (win.gatehouse) {
    return { mode: 'electron', api: createElectronApi(win.gatehouse), exportHref: () => null };
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
