import { describe, expect, it, vi } from 'vitest';
import type { MenuItemConstructorOptions } from 'electron';
import {
  INITIAL_TRAY_STATE,
  buildTrayMenu,
  menuLabel,
  pendingItems,
  signInItems,
  trayIconState,
  trayTooltip,
} from '../../main/app/tray-menu.ts';
import type { TrayActions, TrayState } from '../../main/app/tray-menu.ts';
import { makeStaged } from '../renderer/fake-api.ts';

const actions = (): TrayActions & Record<string, ReturnType<typeof vi.fn>> => ({
  openConsole: vi.fn(),
  approve: vi.fn(),
  discard: vi.fn(),
  setEnabled: vi.fn(),
  setOpenAtLogin: vi.fn(),
  installUpdate: vi.fn(),
  quit: vi.fn(),
});
const running = (over: Partial<TrayState> = {}): TrayState => ({ ...INITIAL_TRAY_STATE, phase: 'running', ...over });
const byId = (menu: MenuItemConstructorOptions[], id: string) => menu.find((m) => m.id === id)!;
const click = (item: MenuItemConstructorOptions | undefined) => (item!.click as () => void)();

describe('tray menu, built from the state', () => {
  it('has a status line, open, pending, gateway switch, start at login and quit', () => {
    const menu = buildTrayMenu(running({ enabled: true }), actions());
    expect(menu.filter((m) => m.type !== 'separator').map((m) => m.label)).toEqual([
      'Gatehouse is on',
      'Open the console',
      'Pending approvals',
      'Cloud: not connected',
      'Gateway on',
      'Start at login',
      'Quit Gatehouse',
    ]);
    expect(byId(menu, 'status').enabled).toBe(false);
    expect(byId(menu, 'gateway')).toMatchObject({ type: 'checkbox', checked: true, enabled: true });
    expect(byId(menu, 'pending').submenu).toEqual([{ label: 'Nothing is waiting', enabled: false }]);
  });

  it('offers no Approve for a write whose token was revoked or narrowed away, only Discard', () => {
    const act = actions();
    const state = running({
      pending: pendingItems([
        { ...makeStaged(1), blocked: 'token_revoked' },
        { ...makeStaged(2), blocked: 'token_narrowed' },
      ]),
      pendingTotal: 2,
    });
    for (const item of byId(buildTrayMenu(state, act), 'pending').submenu as MenuItemConstructorOptions[]) {
      const sub = item.submenu as MenuItemConstructorOptions[];
      expect(sub.find((i) => i.label === 'Approve')).toBeUndefined();
      expect(sub.find((i) => /cannot be approved/.test(i.label ?? ''))).toMatchObject({ enabled: false });
      expect(sub.find((i) => i.label === 'Discard')).toBeDefined();
    }
  });

  it('lists pending writes, each with approve and discard', () => {
    const act = actions();
    const staged = [makeStaged(2), makeStaged(1, { token_label: 'Cursor & co', preview_hash: 'a'.repeat(64) })];
    const state = running({ pending: pendingItems(staged), pendingTotal: 2 });
    const menu = buildTrayMenu(state, act);
    const pending = byId(menu, 'pending');
    expect(pending.label).toBe('Pending approvals (2)');
    const items = pending.submenu as MenuItemConstructorOptions[];
    expect(items.map((i) => i.label)).toEqual(['Update page 1 (pages_update)', 'Update page 2 (pages_update)']);
    const first = items[0]!.submenu as MenuItemConstructorOptions[];
    expect(first[0]).toEqual({ label: 'Asked by Cursor && co', enabled: false });
    click(first.find((i) => i.label === 'Approve'));
    expect(act.approve).toHaveBeenCalledWith('stg_0001', 'a'.repeat(64));
    click((items[1]!.submenu as MenuItemConstructorOptions[]).find((i) => i.label === 'Discard'));
    expect(act.discard).toHaveBeenCalledWith('stg_0002');
    click(first.find((i) => i.label === 'Show in the console'));
    expect(act.openConsole).toHaveBeenCalledWith('approvals');
  });

  it('shows at most ten, and points to the console for the rest', () => {
    const staged = Array.from({ length: 14 }, (_, i) => makeStaged(i));
    const items = byId(
      buildTrayMenu(running({ pending: pendingItems(staged), pendingTotal: 14 }), actions()),
      'pending',
    ).submenu as MenuItemConstructorOptions[];
    expect(items.filter((i) => i.submenu)).toHaveLength(10);
    expect(items.at(-1)!.label).toBe('4 more in the console…');
  });

  it('switches the gateway and start-at-login to the opposite of the state', () => {
    const act = actions();
    const menu = buildTrayMenu(running({ enabled: false, openAtLogin: true }), act);
    click(byId(menu, 'gateway'));
    click(byId(menu, 'login'));
    click(byId(menu, 'quit'));
    click(byId(menu, 'open'));
    expect(act.setEnabled).toHaveBeenCalledWith(true);
    expect(act.setOpenAtLogin).toHaveBeenCalledWith(false);
    expect(act.quit).toHaveBeenCalled();
    expect(act.openConsole).toHaveBeenCalledWith();
  });

  it('disables what needs the service while it starts or after it failed', () => {
    const starting = buildTrayMenu(INITIAL_TRAY_STATE, actions());
    expect(byId(starting, 'status').label).toBe('Gatehouse is starting…');
    expect(byId(starting, 'gateway')).toMatchObject({ enabled: false, checked: false });
    expect(byId(starting, 'pending').enabled).toBe(false);
    const failed = buildTrayMenu(
      { ...INITIAL_TRAY_STATE, phase: 'failed', error: 'port 7823 on 127.0.0.1 is in use' },
      actions(),
    );
    expect(byId(failed, 'status').label).toBe('Not running: port 7823 on 127.0.0.1 is in use');
  });

  it('picks the icon and tooltip from the state', () => {
    expect(trayIconState(running({ enabled: false }))).toBe('off');
    expect(trayIconState(running({ enabled: true }))).toBe('on');
    expect(trayIconState(running({ enabled: true, pendingTotal: 1 }))).toBe('attention');
    expect(trayIconState({ ...INITIAL_TRAY_STATE, phase: 'failed' })).toBe('attention');
    expect(trayTooltip(running({ enabled: true, pendingTotal: 3 }))).toBe('Gatehouse: on · 3 pending approvals');
    expect(trayTooltip(running({ enabled: false, pendingTotal: 1 }))).toBe('Gatehouse: off · 1 pending approval');
    expect(trayTooltip(running())).toBe('Gatehouse: off');
  });

  it('keeps labels to one short line', () => {
    expect(menuLabel('a\nb   c')).toBe('a b c');
    expect(menuLabel('x'.repeat(100))).toHaveLength(60);
  });

  it('one "sign in again" item per OAuth upstream whose sign-in ran out, opening the console on it; none for one signed out on purpose', () => {
    const act = actions();
    const oauth = (state: string, reason: string | null = null) => ({ state, reason });
    const signIns = signInItems([
      {
        id: 'linear',
        oauth: oauth('sign_in_required', 'the authorization server refused the refresh (sign in again)'),
      },
      { id: 'github', oauth: oauth('signed_in') },
      { id: 'files' },
      { id: 'notes', oauth: oauth('sign_in_required', 'signed out') },
      {
        id: 'a&b\u0007',
        oauth: oauth('sign_in_required', 'the access token expired and the server gave no refresh token'),
      },
    ]);
    expect(signIns.map((s) => s.id)).toEqual(['linear', 'a&b\u0007']);
    const state = running({ enabled: true, signIns });
    expect(trayIconState(state)).toBe('attention');
    const menu = buildTrayMenu(state, act);
    const items = menu.filter((m) => m.id?.startsWith('signin-'));
    expect(items.map((m) => m.label)).toEqual(['Sign in again: linear', 'Sign in again: a&&b']);
    expect(items[0]!.toolTip).toMatch(/refused the refresh/);
    click(items[1]);
    expect(act.openConsole).toHaveBeenCalledWith('upstreams', 'a&b\u0007');
    // Not running: no item (the service answers nothing), and an empty list shows none.
    expect(buildTrayMenu({ ...state, phase: 'failed' }, act).some((m) => m.id?.startsWith('signin-'))).toBe(false);
    expect(buildTrayMenu(running({ enabled: true }), act).some((m) => m.id?.startsWith('signin-'))).toBe(false);
    const many = buildTrayMenu(
      running({ signIns: Array.from({ length: 8 }, (_, i) => ({ id: `u${i}`, reason: null })) }),
      act,
    );
    expect(many.filter((m) => m.id?.startsWith('signin-u'))).toHaveLength(5);
    click(byId(many, 'signin-more'));
    expect(act.openConsole).toHaveBeenLastCalledWith('upstreams');
  });
});
