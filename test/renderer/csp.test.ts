import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONSOLE_CSP, CONSOLE_CSP_META } from '../../main/contract/index.ts';

const html = readFileSync(new URL('../../renderer/index.html', import.meta.url), 'utf8');

describe('console CSP', () => {
  it('the meta tag in renderer/index.html is the shared policy', () => {
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html);
    expect(meta?.[1]).toBe(CONSOLE_CSP_META);
  });

  it('the header policy is the meta policy plus frame-ancestors, and allows nothing inline or remote', () => {
    expect(CONSOLE_CSP).toBe(`${CONSOLE_CSP_META}; frame-ancestors 'none'`);
    expect(CONSOLE_CSP).toContain("default-src 'none'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
  });

  it('the source page has no inline script or style', () => {
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);
  });
});
