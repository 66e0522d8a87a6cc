import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail, UpstreamView } from '../../../../main/contract/upstreams.ts';
import { HOSTILE_UPSTREAM, startUpstreamWorld, type UpstreamWorld } from '../upstream-world.ts';

/**
 * A machine that cannot confine (bubblewrap missing, as detect.ts reports it):
 * a stdio server is never started unconfined behind the person's back. The add
 * is refused with the reason and the fix; only a person's --unconfined runs it.
 */
let u: UpstreamWorld;

beforeAll(async () => {
  // What detect.ts answers on a machine without bubblewrap (this one has it).
  u = await startUpstreamWorld({
    sandboxDetect: async () => ({
      ok: false,
      backend: 'bubblewrap',
      why: 'bubblewrap (bwrap) is not installed, so stdio servers cannot be confined',
      fix: 'install bubblewrap and socat (Debian/Ubuntu: sudo apt-get install bubblewrap socat)',
    }),
  });
}, 120_000);
afterAll(async () => {
  await u?.stop();
});

describe('when this machine cannot confine', () => {
  it('refuses to start a stdio server, saying why and what to do; nothing is stored', async () => {
    const r = await u.w.admin('POST', 'upstreams', {
      id: 'h',
      transport: { kind: 'stdio', command: process.execPath, args: [HOSTILE_UPSTREAM] },
    });
    expect(r.body).toMatchObject({ ok: false, code: 'upstream_unavailable' });
    expect(r.body.message).toMatch(
      /the sandbox cannot start here: bubblewrap \(bwrap\) is not installed.*apt-get install bubblewrap/,
    );
    expect(await u.ok<UpstreamView[]>('GET', 'upstreams')).toEqual([]);
  });

  it('runs it only when a person says --unconfined, and then says so', async () => {
    await u.ok('POST', 'upstreams', {
      id: 'h',
      transport: { kind: 'stdio', command: process.execPath, args: [HOSTILE_UPSTREAM], sandbox: { unconfined: true } },
    });
    const d = await u.ok<UpstreamDetail>('GET', 'upstreams/h');
    expect(d.health.status).toBe('connected');
    expect(d.confinement).toMatchObject({ state: 'unconfined' });
    // Confining it again on this machine: down, with the reason, never unconfined.
    const g = await u.ok<UpstreamDetail>('POST', 'upstreams/h/grant', { id: 'h' });
    expect(g.confinement).toMatchObject({ state: 'unavailable', why: expect.stringMatching(/not installed/) });
    const down = await u.ok<UpstreamDetail>('GET', 'upstreams/h');
    expect(down.health.status).toBe('down');
    const health = await u.ok<{ warnings: Array<{ code: string; message: string }> }>('GET', 'health');
    expect(health.warnings.map((w) => w.code)).toContain('upstream_sandbox_unavailable');
  });
});
