import { describe, expect, it } from 'vitest';
import { ApprovalNotices, noticeText, pendingBadge } from '../../../main/core/staging/approval-notices.ts';
import { makeStaged } from '../../renderer/fake-api.ts';

// What the desktop tells the person about pending writes, decided outside
// main/app (the Electron part only wires it: test/app/notifications.test.ts).

const staged = (i: number, over: Parameters<typeof makeStaged>[1] = {}) => ({
  type: 'staged' as const,
  item: { ...makeStaged(i, over), preview_hash: `${i}`.padStart(64, '0') },
});

describe('approval notices', () => {
  it('one notice per new pending write, never twice, none for decided writes or other events; it names the preview hash', () => {
    const p = new ApprovalNotices(() => 0);
    const first = p.onEvent(staged(1));
    expect(first).toEqual({
      show: {
        kind: 'write',
        staged_id: 'stg_0001',
        preview_hash: '1'.padStart(64, '0'),
        tool: 'pages_update',
        summary: 'Update page 1',
        who: 'Claude Desktop',
        actions: true,
      },
      hold: false,
    });
    expect(p.onEvent(staged(1)).show).toBeNull();
    expect(p.onEvent(staged(1, { status: 'applying' })).show).toBeNull();
    expect(p.onEvent(staged(2, { status: 'confirmed' })).show).toBeNull();
    expect(p.onEvent({ type: 'health' }).show).toBeNull();
  });

  it('folds a burst: three shown, the rest held and told once as "N more"; a quiet window later, one each again', () => {
    let t = 0;
    const p = new ApprovalNotices(() => t);
    const shown = Array.from({ length: 50 }, (_, i) => p.onEvent(staged(i)));
    expect(shown.filter((r) => r.show)).toHaveLength(3);
    expect(shown.filter((r) => r.hold)).toHaveLength(47);
    expect(p.flush()).toEqual({
      kind: 'held',
      title: 'More approvals needed',
      body: '47 more staged writes waiting in Gatehouse',
    });
    expect(p.flush()).toBeNull();
    t += 10_000;
    expect(p.onEvent(staged(99)).show).not.toBeNull();
  });

  it('offers no Approve / Discard for a write that cannot be approved (its token revoked or narrowed away)', () => {
    const p = new ApprovalNotices(() => 0);
    expect(p.onEvent({ type: 'staged', item: { ...makeStaged(1), blocked: 'token_revoked' } }).show?.actions).toBe(
      false,
    );
    expect(p.onEvent({ type: 'staged', item: { ...makeStaged(2), blocked: 'token_narrowed' } }).show?.actions).toBe(
      false,
    );
  });

  it('never carries a secret: a summary or client name an agent filled with a key is masked', () => {
    const key = `sk-ant-api03-${'Qw3rTy9Uio0P'.repeat(4)}`;
    const text = noticeText({
      tool: 'upstream__send',
      preview: { summary: `send ${key}`, kind: 'arguments', changes: [] },
      token_label: `label gth_${'a1B2c3D4e5'.repeat(4)}`,
      client: null,
    });
    expect(JSON.stringify(text)).not.toContain(key);
    expect(text.summary).toBe('send [redacted]');
    expect(text.who).toBe('label [redacted]');
  });

  it('the count beside the tray icon', () => {
    expect([0, 1, 42, 99, 100, 5000].map(pendingBadge)).toEqual(['', '1', '42', '99', '99+', '99+']);
  });
});
