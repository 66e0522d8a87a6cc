import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService } from '../helpers/service.ts';

// A used or expired console login link answers with a styled page that says
// what to do, not plain text; its one stylesheet is allowed by hash, nothing else.

let svc: Awaited<ReturnType<typeof startTestService>>;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.cleanup());

describe('the used login link page', () => {
  it('is a styled HTML page with a strict CSP that allows exactly its own style', async () => {
    const link = svc.loginUrl();
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(302);
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(401);
    expect(again.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(again.headers.get('cache-control')).toBe('no-store');
    expect(again.headers.get('set-cookie')).toBeNull();
    const html = await again.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('gatehouse console-link');
    expect(html).not.toMatch(/<script/i);
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const csp = again.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);
  });
});
