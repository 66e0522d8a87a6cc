import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeStaged } from '../renderer/fake-api.ts';

vi.mock('electron', () => import('./electron-mock.ts'));
const electron = await import('./electron-mock.ts');
const { createStagedNotifier } = await import('../../main/app/notifications.ts');

beforeEach(() => electron.resetElectron());
afterEach(() => vi.useRealTimers());

describe('staged-write notifications', () => {
  it('shows one per new pending write; clicking it opens Approvals', () => {
    const openApprovals = vi.fn();
    const notify = createStagedNotifier({ openApprovals });
    notify({ type: 'staged', item: makeStaged(1) });
    notify({ type: 'staged', item: makeStaged(1) }); // the same write again
    notify({ type: 'staged', item: makeStaged(2, { status: 'confirmed' }) });
    notify({ type: 'health' });
    expect(electron.Notification.shown).toHaveLength(1);
    const n = electron.Notification.shown[0]!;
    expect(n.options).toEqual({ title: 'Approval needed: pages_update', body: 'Update page 1\nAsked by Claude Desktop' });
    n.emit('click');
    expect(openApprovals).toHaveBeenCalledTimes(1);
  });

  it('folds a burst into a summary', () => {
    vi.useFakeTimers();
    const notify = createStagedNotifier({ openApprovals: vi.fn() });
    for (let i = 0; i < 50; i++) notify({ type: 'staged', item: makeStaged(i) });
    expect(electron.Notification.shown).toHaveLength(3);
    vi.advanceTimersByTime(10_000);
    expect(electron.Notification.shown).toHaveLength(4);
    expect(electron.Notification.shown[3]!.options.body).toBe('47 more staged writes waiting in Gatehouse');
    notify({ type: 'staged', item: makeStaged(99) });
    expect(electron.Notification.shown).toHaveLength(5);
  });

  it('stays quiet where the system has no notifications', () => {
    electron.Notification.supported = false;
    createStagedNotifier({ openApprovals: vi.fn() })({ type: 'staged', item: makeStaged(1) });
    expect(electron.Notification.shown).toHaveLength(0);
  });
});
