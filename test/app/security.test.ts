import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CONSOLE_CSP } from '../../main/contract/index.ts';

vi.mock('electron', () => import('./electron-mock.ts'));
const electron = await import('./electron-mock.ts');
const { hardenSession, isAllowedExternal } = await import('../../main/app/security.ts');
const { registerAppScheme, serveApp } = await import('../../main/app/app-protocol.ts');
const { appUrl, isAppUrl, resolveAppFile } = await import('../../main/app/app-url.ts');

let dir: string;
beforeEach(async () => {
  electron.resetElectron();
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-app-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>console</title>');
  await writeFile(join(dir, 'assets', 'index-1.js'), 'console.log(1)');
  await writeFile(join(dir, '..', `secret-${dir.split('-').pop()}.txt`), 'secret');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(join(dir, '..', `secret-${dir.split('-').pop()}.txt`), { force: true });
});

describe('session hardening', () => {
  it('denies every permission and puts our CSP on every response', () => {
    const ses = electron.session.defaultSession;
    hardenSession(ses as never);
    const answers: boolean[] = [];
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal'])
      ses.permissionRequest!(null, permission, (ok: boolean) => answers.push(ok));
    expect(answers).toEqual([false, false, false, false, false]);
    expect(ses.permissionCheck!(null, 'media')).toBe(false);
    expect(ses.devicePermission!({})).toBe(false);
    let headers: Record<string, string[]> = {};
    ses.headersReceived!(
      {
        responseHeaders: { 'content-security-policy': ["default-src *; script-src 'unsafe-inline'"], 'X-Other': ['1'] },
      },
      (r: { responseHeaders: Record<string, string[]> }) => (headers = r.responseHeaders),
    );
    expect(headers).toEqual({ 'X-Other': ['1'], 'Content-Security-Policy': [CONSOLE_CSP] });
  });

  it('opens only allow-listed https pages externally', () => {
    expect(isAllowedExternal('https://github.com/x/y')).toBe(true);
    expect(isAllowedExternal('https://docs.github.com/x')).toBe(true);
    expect(isAllowedExternal('https://modelcontextprotocol.io/specification')).toBe(true);
    for (const url of [
      'http://github.com/',
      'https://github.com.evil.example/',
      'https://evilgithub.com/',
      'https://user@github.com/',
      'https://github.com:8443/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'not a url',
    ]) {
      expect(isAllowedExternal(url), url).toBe(false);
    }
  });
});

describe('app:// protocol', () => {
  it('registers app:// as a standard, secure scheme', () => {
    registerAppScheme(electron.protocol as never);
    expect(electron.protocol.privileged).toEqual([
      { scheme: 'app', privileges: expect.objectContaining({ standard: true, secure: true }) },
    ]);
  });

  it('serves the console with the CSP header and never a file outside it', async () => {
    serveApp(electron.protocol as never, dir);
    const handle = electron.protocol.handlers.get('app')!;
    const index = await handle(new Request(appUrl('approvals')));
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(await index.text()).toContain('<title>console</title>');
    const js = await handle(new Request('app://console/assets/index-1.js'));
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const name = `secret-${dir.split('-').pop()}.txt`;
    for (const url of [
      `app://console/..%2f${name}`,
      `app://console/%2e%2e/${name}`,
      'app://console/missing.js',
      `app://other/${name}`,
    ]) {
      const r = await handle(new Request(url));
      expect(r.status, url).toBe(404);
      expect(r.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    }
  });

  it('recognizes only its own pages', () => {
    expect(isAppUrl('app://console/index.html#tokens')).toBe(true);
    expect(isAppUrl('app://evil/index.html')).toBe(false);
    expect(isAppUrl('https://console/')).toBe(false);
    expect(resolveAppFile('/r', 'app://console/')).toBe(join('/r', 'index.html'));
    expect(resolveAppFile('/r', 'app://console/a%00.js')).toBeNull();
  });
});
