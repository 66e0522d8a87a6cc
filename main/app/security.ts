import type { Session, WebPreferences } from 'electron';
import { CONSOLE_CSP } from '../contract/csp.ts';

/**
 * Electron's security checklist in one place: the window's web preferences,
 * the session's permission and header rules, and which links may leave the
 * app for the system browser.
 */
export function secureWebPreferences(preload: string): WebPreferences {
  return {
    preload,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
  };
}

/** Hosts whose https pages the app may open in the system browser (documentation, issue tracker). */
export const EXTERNAL_HOSTS: readonly string[] = ['github.com', 'modelcontextprotocol.io'];

export function isAllowedExternal(url: string, hosts: readonly string[] = EXTERNAL_HOSTS): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== 'https:' || u.username || u.password || u.port) return false;
  return hosts.some((h) => u.hostname === h || u.hostname.endsWith(`.${h}`));
}

/** Every permission request (camera, notifications from the page, geolocation...) is refused; every response carries our CSP. */
export function hardenSession(session: Session): void {
  session.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  session.setDevicePermissionHandler(() => false);
  session.webRequest.onHeadersReceived((details, callback) => {
    const headers = { ...(details.responseHeaders ?? {}) };
    for (const key of Object.keys(headers)) if (key.toLowerCase() === 'content-security-policy') delete headers[key];
    headers['Content-Security-Policy'] = [CONSOLE_CSP];
    callback({ responseHeaders: headers });
  });
}
