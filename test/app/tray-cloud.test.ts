import { describe, expect, it, vi } from 'vitest';
import type { MenuItemConstructorOptions } from 'electron';
import { NO_CLOUD, cloudLine, trayCloud, trayQuota } from '../../main/app/tray-cloud.ts';
import { INITIAL_TRAY_STATE, buildTrayMenu, trayIconState, trayTooltip } from '../../main/app/tray-menu.ts';
import type { TrayActions, TrayState } from '../../main/app/tray-menu.ts';
import { connectedStatus, makeCloudStatus, quotaAlert } from '../renderer/fake-cloud.ts';
import { makeHealth } from '../renderer/fake-api.ts';

const actions = (): TrayActions & Record<string, ReturnType<typeof vi.fn>> => ({
  openConsole: vi.fn(),
  approve: vi.fn(),
  discard: vi.fn(),
  setEnabled: vi.fn(),
  setOpenAtLogin: vi.fn(),
  installUpdate: vi.fn(),
  quit: vi.fn(),
});
const running = (over: Partial<TrayState> = {}): TrayState => ({
  ...INITIAL_TRAY_STATE,
  phase: 'running',
  enabled: true,
  ...over,
});
const byId = (menu: MenuItemConstructorOptions[], id: string) => menu.find((m) => m.id === id);

describe('the tray and the cloud', () => {
  it('reads the connection, the first problem and the quotas (used up first) from cloud.status', () => {
    const status = connectedStatus(Date.now(), {
      warnings: [
        { code: 'cloud_quota_near', message: 'x' },
        { code: 'cloud_gateway_unreachable', message: 'The cloud gateway failed repeatedly' },
      ],
      quota_alerts: [
        quotaAlert({ level: 'near', metric: 'mcp_actions', used: 900, limit: 1000 }),
        quotaAlert({ scope: 'account', subject: 'acme' }),
      ],
    });
    const cloud = trayCloud(status, null);
    expect(cloud.connected).toBe(true);
    expect(cloud.problem).toBe('the gateway cannot be reached');
    expect(cloud.quotas.map((q) => [q.level, q.text])).toEqual([
      ['exceeded', 'AI tokens per month (account acme) used up, resets 2026-12-01 00:00 UTC'],
      ['near', 'MCP tool calls per month (this site) nearly used up, resets 2026-12-01 00:00 UTC'],
    ]);
    expect(cloudLine(cloud)).toBe('Cloud: connected, but the gateway cannot be reached');
    expect(cloudLine(trayCloud(makeCloudStatus(), null))).toBe('Cloud: not connected');
    expect(cloudLine(trayCloud(connectedStatus(), null))).toBe('Cloud: connected');
  });

  it('falls back to the health report when cloud.status cannot be read', () => {
    const health = makeHealth({
      warnings: [
        { code: 'cloud_quota_exceeded', message: 'AI tokens per month used up until 2026-12-01' },
        { code: 'cloud_sync_failed', message: 'x' },
      ],
    });
    health.cloud.gateway.connected = true;
    const cloud = trayCloud(null, health);
    expect(cloud).toEqual({
      connected: true,
      problem: 'the last sync failed',
      quotas: [
        {
          level: 'exceeded',
          key: 'cloud_quota_exceeded|AI tokens per month used up until 2026-12-01',
          text: 'AI tokens per month used up until 2026-12-01',
        },
      ],
    });
    expect(trayCloud(null, null)).toEqual(NO_CLOUD);
  });

  it('a new period of the same quota is a new key', () => {
    expect(trayQuota(quotaAlert()).key).not.toBe(trayQuota(quotaAlert({ reset_at: '2027-01-01T00:00:00.000Z' })).key);
    expect(trayQuota(quotaAlert()).key).toBe(
      trayQuota(quotaAlert({ used: 12_000, seen_at: '2026-11-24T00:00:00.000Z' })).key,
    );
  });

  it('shows the cloud line (opens Cloud) and up to three quota warnings (open Usage) in the menu', () => {
    const act = actions();
    const alerts = [
      quotaAlert(),
      ...['mcp_actions', 'reports', 'cloud_tasks'].map((metric) =>
        quotaAlert({ level: 'near', metric: metric as 'reports' }),
      ),
    ];
    const menu = buildTrayMenu(
      running({ cloud: trayCloud(connectedStatus(Date.now(), { quota_alerts: alerts }), null) }),
      act,
    );
    expect(byId(menu, 'cloud')!.label).toBe('Cloud: connected');
    expect(byId(menu, 'quota-0')!.label).toBe('⚠ AI tokens per month (this site) used up, resets 2026-12-01 00:00 UTC');
    expect(byId(menu, 'quota-2')!.label).toBe(
      'Reports per month (this site) nearly used up, resets 2026-12-01 00:00 UTC',
    );
    expect(byId(menu, 'quota-3')).toBeUndefined();
    expect(menu.find((m) => m.label === '1 more quota warnings…')).toBeTruthy();
    (byId(menu, 'cloud')!.click as () => void)();
    (byId(menu, 'quota-1')!.click as () => void)();
    expect(vi.mocked(act.openConsole).mock.calls).toEqual([['cloud'], ['usage']]);
  });

  it('turns the icon to attention and says so in the tooltip when a quota is used up; near only in the tooltip', () => {
    const exceeded = running({ cloud: trayCloud(connectedStatus(Date.now(), { quota_alerts: [quotaAlert()] }), null) });
    expect(trayIconState(exceeded)).toBe('attention');
    expect(trayTooltip(exceeded)).toBe('Gatehouse: on · a cloud quota is used up');
    const near = running({
      cloud: trayCloud(connectedStatus(Date.now(), { quota_alerts: [quotaAlert({ level: 'near' })] }), null),
    });
    expect(trayIconState(near)).toBe('on');
    expect(trayTooltip(near)).toBe('Gatehouse: on · a cloud quota is nearly used up');
  });

  it('leaves the cloud out of the menu while the service is not running', () => {
    const menu = buildTrayMenu({ ...INITIAL_TRAY_STATE, phase: 'failed', error: 'port in use' }, actions());
    expect(byId(menu, 'cloud')).toBeUndefined();
  });

  it('offers a verified update in the menu only when one is ready; installing is a click', () => {
    const act = actions();
    expect(byId(buildTrayMenu(running(), act), 'update')).toBeUndefined();
    const menu = buildTrayMenu(running({ update: '9.9.0' }), act);
    expect(byId(menu, 'update')!.label).toBe('Install Gatehouse 9.9.0…');
    expect(act.installUpdate).not.toHaveBeenCalled();
    (byId(menu, 'update')!.click as () => void)();
    expect(act.installUpdate).toHaveBeenCalledTimes(1);
  });

  describe('text from the cloud', () => {
    // C0/C1 controls, DEL, bidi embeddings/overrides/isolates, line and paragraph separators
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
    const hostile = 'acme\u001b[2J\r\nFAKE: click to approve\u0007\u202etxt.exe\u2028\u0085end';
    const labels = (menu: MenuItemConstructorOptions[]): string[] =>
      menu.flatMap((m) => [m.label ?? '', ...(Array.isArray(m.submenu) ? labels(m.submenu) : [])]);

    it('quota names, reset times and warning messages reach the menu as one bounded line without control characters', () => {
      const status = connectedStatus(Date.now(), {
        quota_alerts: [
          quotaAlert({ scope: 'account', subject: hostile }),
          quotaAlert({
            level: 'near',
            scope: 'project',
            subject: 'p'.repeat(5000),
            reset_at: `soon\u0000${'9'.repeat(3000)}`,
          }),
        ],
      });
      const menu = buildTrayMenu(running({ cloud: trayCloud(status, null) }), actions());
      const quota0 = byId(menu, 'quota-0')!.label!;
      const quota1 = byId(menu, 'quota-1')!.label!;
      for (const label of [quota0, quota1]) {
        expect(label).not.toMatch(UNSAFE);
        expect(label.length).toBeLessThanOrEqual(80);
      }
      expect(quota0).toBe('⚠ AI tokens per month (account acme[2J FAKE: click to approvetxt.exe end) used…');
      expect(quota1).toMatch(/^AI tokens per month \(project p+…$/);

      const health = makeHealth({
        warnings: [{ code: 'cloud_quota_exceeded', message: `${hostile} ${'w'.repeat(4000)}` }],
      });
      health.cloud.gateway.connected = true;
      const fromHealth = buildTrayMenu(running({ cloud: trayCloud(null, health) }), actions());
      expect(byId(fromHealth, 'quota-0')!.label).not.toMatch(UNSAFE);
      expect(byId(fromHealth, 'quota-0')!.label!.length).toBeLessThanOrEqual(80);
    });

    it('an update version and the staged writes in the menu are cleaned the same way', () => {
      const menu = buildTrayMenu(
        running({
          update: `9.9.9\u001b]8;;https://evil.example\u0007 now\u202e`,
          pending: [
            {
              id: 'stg_1',
              tool: `pages_update\u0000${'t'.repeat(300)}`,
              summary: hostile,
              who: `Claude\u000d\u000aAsked by nobody\u2066`,
              preview_hash: null,
              blocked: null,
            },
          ],
          pendingTotal: 1,
        }),
        actions(),
      );
      for (const label of labels(menu)) {
        expect(label).not.toMatch(UNSAFE);
        expect(label.length).toBeLessThanOrEqual(160);
      }
      expect(byId(menu, 'update')!.label).toBe('Install Gatehouse 9.9.9]8;;https://evil.example now…');
    });
  });
});
