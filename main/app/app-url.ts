import { normalize, sep, join } from 'node:path';
import type { ConsoleScreen } from '../contract/screens.ts';

/**
 * The console inside the app is served from `app://console/` (a privileged,
 * standard, secure scheme we register), not file://: it gets a real origin
 * for the CSP's 'self', ES modules load, and no other local file is reachable.
 */
export const APP_SCHEME = 'app';
const APP_HOST = 'console';
const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

export type { ConsoleScreen } from '../contract/screens.ts';

/** `focus`: a staged write's id for the Approvals screen to select (`#approvals/stg_…`); anything but an id is dropped. */
export function appUrl(screen?: ConsoleScreen, focus?: string): string {
  const item = screen && focus && /^[A-Za-z0-9_-]{1,64}$/.test(focus) ? `/${focus}` : '';
  return `${APP_ORIGIN}/index.html${screen ? `#${screen}${item}` : ''}`;
}

/** Whether `url` is a page of our console (any path, query or fragment). */
export function isAppUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST && !u.username && !u.password;
  } catch {
    return false;
  }
}

/** The file under `root` an app:// URL names, or null when it is not ours or tries to leave `root`. */
export function resolveAppFile(root: string, url: string): string | null {
  if (!isAppUrl(url)) return null;
  let path: string;
  try {
    path = decodeURIComponent(new URL(url).pathname);
  } catch {
    return null;
  }
  if (path.includes('\0')) return null;
  const clean = normalize(path === '/' || path === '' ? 'index.html' : path).replace(/^([/\\])+/, '');
  if (clean.startsWith('..')) return null;
  const base = normalize(root).replace(/[/\\]+$/, '');
  const file = join(base, clean);
  return file.startsWith(base + sep) ? file : null;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  png: 'image/png',
  svg: 'image/svg+xml',
  json: 'application/json',
  ico: 'image/x-icon',
  woff2: 'font/woff2',
};

export const contentType = (file: string): string =>
  TYPES[file.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';
