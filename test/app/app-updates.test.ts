import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openLocalCore } from '../../main/local-core.ts';
import { startAppUpdates } from '../../main/app/app-updates.ts';
import type { UpdaterState } from '../../main/updates/desktop-updater.ts';

afterEach(() => vi.useRealTimers());

describe('the desktop app’s update checks', () => {
  it('checks a minute after start through the real core, as the tray; unconnected it offers nothing and says why', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gh-app-updates-'));
    const core = await openLocalCore({ dataDir: dir, vault: 'file', owner: 'service' });
    try {
      vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval'] });
      const states: UpdaterState[] = [];
      const updates = startAppUpdates({
        invoke: core.invoke,
        cloud: core.cloud,
        dataDir: dir,
        platform: 'linux',
        arch: 'x64',
        onState: (s) => states.push(s),
      });
      expect(updates).not.toBeNull();
      vi.advanceTimersByTime(59_000);
      expect(states).toEqual([]);
      vi.advanceTimersByTime(1_000);
      vi.useRealTimers();
      await vi.waitFor(() => expect(states.at(-1)?.phase).toBe('failed'));
      expect(states.map((s) => s.phase)).toEqual(['checking', 'failed']);
      expect((states.at(-1) as { reason: string }).reason).toMatch(/\(invalid_site\)$/);
      updates!.stop();
    } finally {
      await core.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('does nothing on a platform no release is built for', () => {
    expect(
      startAppUpdates({
        invoke: vi.fn(),
        cloud: { api: null, openManifest: vi.fn() },
        dataDir: '/nowhere',
        platform: 'aix',
        arch: 'ppc64',
        onState: vi.fn(),
      }),
    ).toBeNull();
  });
});
