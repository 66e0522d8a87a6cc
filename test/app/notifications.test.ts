import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeStaged } from '../renderer/fake-api.ts';

vi.mock('electron', () => import('./electron-mock.ts'));
const electron = await import('./electron-mock.ts');
const { createQuotaNotifier, createStagedNotifier, createUpdateNotifier, showProblem } =
  await import('../../main/app/notifications.ts');
const { trayQuota } = await import('../../main/app/tray-cloud.ts');
const { quotaAlert } = await import('../renderer/fake-cloud.ts');

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
    expect(n.options).toEqual({
      title: 'Approval needed: pages_update',
      body: 'Update page 1\nAsked by Claude Desktop',
    });
    n.emit('click');
    expect(openApprovals).toHaveBeenCalledWith('stg_0001');
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

  it('on macOS it carries Approve and Discard: a pressed button decides as the tray does, naming the preview shown; a click opens the console on that write', () => {
    const approve = vi.fn();
    const discard = vi.fn();
    const openApprovals = vi.fn();
    const notify = createStagedNotifier({ openApprovals, approve, discard, platform: 'darwin' });
    notify({ type: 'staged', item: makeStaged(1, { preview_hash: 'b'.repeat(64) }) });
    notify({ type: 'staged', item: makeStaged(2) });
    const [first, second] = electron.Notification.shown;
    expect(first!.options.actions).toEqual([
      { type: 'button', text: 'Approve' },
      { type: 'button', text: 'Discard' },
    ]);
    // nothing is decided until the person presses a button the OS drew
    expect(approve).not.toHaveBeenCalled();
    first!.emit('action', {}, 0);
    expect(approve).toHaveBeenCalledWith('stg_0001', 'b'.repeat(64));
    second!.emit('action', {}, 1);
    expect(discard).toHaveBeenCalledWith('stg_0002');
    first!.emit('click');
    expect(openApprovals).toHaveBeenCalledWith('stg_0001');
  });

  it('offers no buttons for a write that cannot be approved, nor where the platform has none (a click opens that write)', () => {
    const approve = vi.fn();
    createStagedNotifier({ openApprovals: vi.fn(), approve, discard: vi.fn(), platform: 'darwin' })({
      type: 'staged',
      item: { ...makeStaged(1), blocked: 'token_revoked' },
    });
    const openApprovals = vi.fn();
    createStagedNotifier({ openApprovals, approve, discard: vi.fn(), platform: 'linux' })({
      type: 'staged',
      item: makeStaged(2),
    });
    expect(electron.Notification.shown.map((n) => n.options.actions)).toEqual([undefined, undefined]);
    electron.Notification.shown[1]!.emit('action', {}, 0);
    expect(approve).not.toHaveBeenCalled();
    electron.Notification.shown[1]!.emit('click');
    expect(openApprovals).toHaveBeenCalledWith('stg_0002');
  });

  it('stays quiet where the system has no notifications', () => {
    electron.Notification.supported = false;
    createStagedNotifier({ openApprovals: vi.fn() })({ type: 'staged', item: makeStaged(1) });
    expect(electron.Notification.shown).toHaveLength(0);
  });
});

describe('quota notifications', () => {
  it('shows one when a quota becomes used up, not for near ones, not twice in one period; clicking opens Usage', () => {
    const openUsage = vi.fn();
    const notify = createQuotaNotifier({ openUsage });
    notify([trayQuota(quotaAlert({ level: 'near' }))]);
    expect(electron.Notification.shown).toHaveLength(0);
    notify([trayQuota(quotaAlert())]);
    notify([trayQuota(quotaAlert({ used: 10_500 }))]);
    expect(electron.Notification.shown).toHaveLength(1);
    const n = electron.Notification.shown[0]!;
    expect(n.options).toEqual({
      title: 'A cloud quota is used up',
      body: 'AI tokens per month (this site) used up, resets 2026-12-01 00:00 UTC. Calls that need it are refused until then (quota_exceeded).',
    });
    n.emit('click');
    expect(openUsage).toHaveBeenCalledTimes(1);
    // the next period is a new quota
    notify([trayQuota(quotaAlert({ reset_at: '2027-01-01T00:00:00.000Z' }))]);
    expect(electron.Notification.shown).toHaveLength(2);
  });
});

describe('update notifications', () => {
  it('says once per version that a verified update is ready; clicking opens the Cloud screen, never installs', () => {
    const openCloud = vi.fn();
    const notify = createUpdateNotifier({ openCloud });
    notify(null);
    notify('9.9.0');
    notify('9.9.0');
    expect(electron.Notification.shown).toHaveLength(1);
    expect(electron.Notification.shown[0]!.options.title).toBe('Gatehouse 9.9.0 is ready to install');
    electron.Notification.shown[0]!.emit('click');
    expect(openCloud).toHaveBeenCalledTimes(1);
    expect(electron.shell.openPath).not.toHaveBeenCalled();
    notify('9.9.1');
    expect(electron.Notification.shown).toHaveLength(2);
  });
});

describe('text from outside in notifications', () => {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
  const hostile = 'acme\u001b[2J\r\nFAKE: click to approve\u0007\u202etxt.exe\u2028end';

  it('quota, update and staged-write notifications carry cloud and client text as bounded lines without control characters', () => {
    createQuotaNotifier({ openUsage: vi.fn() })([
      trayQuota(quotaAlert({ scope: 'account', subject: `${hostile}${'s'.repeat(5000)}` })),
    ]);
    createUpdateNotifier({ openCloud: vi.fn() })(`9.9.9\u001b]8;;https://evil.example\u0007\u202e${'9'.repeat(500)}`);
    createStagedNotifier({ openApprovals: vi.fn() })({
      type: 'staged',
      item: makeStaged(1, {
        tool: `pages_update\u0000${hostile}`,
        preview: { ...makeStaged(1).preview, summary: `${hostile}${'x'.repeat(5000)}` },
        token_label: `Claude${hostile}`,
      }),
    });
    expect(electron.Notification.shown).toHaveLength(3);
    const [quota, update, staged] = electron.Notification.shown.map(
      (n) => n.options as { title: string; body: string },
    );
    for (const { title, body } of [quota!, update!, staged!]) {
      expect(title).not.toMatch(UNSAFE);
      expect(title.length).toBeLessThanOrEqual(120);
      expect(body).not.toMatch(UNSAFE);
      expect(body.length).toBeLessThanOrEqual(400);
    }
    // the one line break Gatehouse puts there itself stays
    expect(staged!.body).toMatch(
      /^acme\[2J FAKE: click to approvetxt\.exe endx+…\nAsked by Claudeacme\[2J FAKE: click to approvetxt\.exe end$/,
    );
    expect(quota!.body).toMatch(
      /^AI tokens per month \(account acme\[2J FAKE: click to approvetxt\.exe ends+…\. Calls that need it are refused until then \(quota_exceeded\)\.$/,
    );
    expect(update!.title).toMatch(/^Gatehouse 9\.9\.9\]8;;https:\/\/evil\.example9+… is ready to install$/);
  });

  it('a reported problem (a failed tray action, a failed start) is one bounded line too', () => {
    showProblem('Could not approve', `upstream said: ${hostile}${'y'.repeat(3000)}`);
    const { title, body } = electron.Notification.shown[0]!.options as { title: string; body: string };
    expect(title).toBe('Could not approve');
    expect(body).not.toMatch(UNSAFE);
    expect(body).toMatch(/^upstream said: acme\[2J FAKE: click to approvetxt\.exe endy+…$/);
    expect(body.length).toBe(400);
  });
});
