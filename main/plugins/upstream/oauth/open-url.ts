import { spawn } from 'node:child_process';
import { GatehouseError } from '../../../core/errors.ts';

/**
 * Authorization URLs come from a remote server's metadata: only http(s)
 * (never `javascript:`, `file:`, a custom scheme that starts a program), no
 * credentials in it, no control characters, and opened by handing the URL as
 * one argument to the platform's opener, never through a shell.
 */
export function checkAuthorizationUrl(raw: URL | string): URL {
  const text = String(raw);
  // eslint-disable-next-line no-control-regex
  if (text.length > 8192 || /[\u0000-\u001f\u007f\s]/.test(text))
    throw new GatehouseError(
      'upstream_error',
      'the authorization URL is too long or contains control characters or spaces: refused',
    );
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new GatehouseError('upstream_error', 'the authorization URL is not a valid URL: refused');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new GatehouseError(
      'upstream_error',
      `the authorization URL uses '${url.protocol.slice(0, 20)}'; only http: and https: are opened: refused`,
    );
  if (url.username || url.password)
    throw new GatehouseError('upstream_error', 'the authorization URL carries credentials: refused');
  return url;
}

/** The platform's URL opener and its arguments (the URL is the last one, a single argv entry). */
export function openerFor(platform: NodeJS.Platform, url: string): { command: string; args: string[] } {
  if (platform === 'darwin') return { command: 'open', args: [url] };
  // rundll32 takes the URL as one argument, unlike `cmd /c start`, which would parse it as a command line.
  if (platform === 'win32') return { command: 'rundll32', args: ['url.dll,FileProtocolHandler', url] };
  return { command: 'xdg-open', args: [url] };
}

/** Opens a checked authorization URL in the default browser; false when no opener ran (the URL is printed anyway). */
export async function openInBrowser(raw: URL | string, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  const url = checkAuthorizationUrl(raw);
  const { command, args } = openerFor(platform, url.href);
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args, { shell: false, stdio: 'ignore', detached: true });
      child.once('error', () => resolve(false));
      child.once('spawn', () => (child.unref(), resolve(true)));
    } catch {
      resolve(false);
    }
  });
}
