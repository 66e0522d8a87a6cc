import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MenuItemConstructorOptions } from 'electron';
import { PRINCIPALS, ROLE_CAPABILITIES } from '../../main/contract/index.ts';
import type { ApiDispatch } from '../../main/contract/index.ts';

vi.mock('electron', () => import('./electron-mock.ts'));
const electron = await import('./electron-mock.ts');
const { TrayController } = await import('../../main/app/tray.ts');
const { TrayStateKeeper, createTrayActions } = await import('../../main/app/tray-state.ts');
const { reviewItems, traySetAside, trayStorage } = await import('../../main/app/tray-menu.ts');
const { openLocalCore } = await import('../../main/local-core.ts');
const { dispatchAs } = await import('../../main/core/admin/invoke.ts');

beforeEach(() => electron.resetElectron());

const noActions = {
  openConsole: vi.fn(),
  approve: vi.fn(),
  discard: vi.fn(),
  setEnabled: vi.fn(),
  setOpenAtLogin: vi.fn(),
  installUpdate: vi.fn(),
  quit: vi.fn(),
};
const running = {
  phase: 'running' as const,
  enabled: true,
  pending: [],
  pendingTotal: 0,
  error: null,
  openAtLogin: false,
  cloud: { connected: false, problem: null, quotas: [] },
  update: null,
  storage: null,
  setAside: [],
  signIns: [],
  review: { count: 0, first: null },
};

describe('tray controller', () => {
  it('uses template icons on macOS and follows the state with icon, tooltip, menu and badge', () => {
    const tray = new TrayController({ iconDir: '/assets', platform: 'darwin', actions: noActions });
    const t = electron.Tray.created[0]!;
    expect(t.image.path).toBe('/assets/tray-offTemplate.png');
    expect(t.image.template).toBe(true);
    tray.update(running);
    expect(t.image.path).toBe('/assets/tray-onTemplate.png');
    expect(t.tooltip).toBe('Gatehouse: on');
    tray.update({ ...running, pendingTotal: 2 });
    expect(t.image.path).toBe('/assets/tray-attentionTemplate.png');
    expect(t.tooltip).toBe('Gatehouse: on · 2 pending approvals');
    expect(electron.app.badge).toBe(2);
    expect((t.menu!.template as MenuItemConstructorOptions[]).find((m) => m.id === 'pending')!.label).toBe(
      'Pending approvals (2)',
    );
  });

  it('says when definitions wait for review (a client calling one gets unknown tool): attention, tooltip, a line opening that upstream', () => {
    const openConsole = vi.fn();
    const tray = new TrayController({ iconDir: '/assets', platform: 'darwin', actions: { ...noActions, openConsole } });
    const t = electron.Tray.created[0]!;
    const review = reviewItems([
      { id: 'off', enabled: false, tools: { quarantined: 4 }, prompts: { quarantined: 0 } },
      { id: 'fs', enabled: true, tools: { quarantined: 2 }, prompts: { quarantined: 1 } },
      { id: 'ok', enabled: true, tools: { quarantined: 0 } },
    ]);
    expect(review).toEqual({ count: 3, first: 'fs' });
    tray.update({ ...running, review });
    expect(t.image.path).toBe('/assets/tray-attentionTemplate.png');
    expect(t.tooltip).toBe('Gatehouse: on · 3 definitions wait for review');
    const line = (t.menu!.template as MenuItemConstructorOptions[]).find((m) => m.id === 'review')!;
    expect(line.label).toBe('3 definitions wait for review…');
    (line.click as () => void)();
    expect(openConsole).toHaveBeenCalledWith('upstreams', 'fs');
    tray.update({ ...running, review: reviewItems([]) });
    expect(t.image.path).toBe('/assets/tray-onTemplate.png');
    expect((t.menu!.template as MenuItemConstructorOptions[]).find((m) => m.id === 'review')).toBeUndefined();
  });

  it('says when the disk is full: attention icon, tooltip and a menu line that opens the console', () => {
    const openConsole = vi.fn();
    const tray = new TrayController({ iconDir: '/assets', platform: 'darwin', actions: { ...noActions, openConsole } });
    const t = electron.Tray.created[0]!;
    tray.update({ ...running, storage: trayStorage([{ code: 'vault_file' }, { code: 'storage_full' }]) });
    expect(t.image.path).toBe('/assets/tray-attentionTemplate.png');
    expect(t.tooltip).toBe('Gatehouse: on · the disk is full');
    const line = (t.menu!.template as MenuItemConstructorOptions[]).find((m) => m.id === 'storage')!;
    expect(line.label).toBe('the disk is full: tool calls are refused');
    (line.click as () => void)();
    expect(openConsole).toHaveBeenCalled();
    expect(trayStorage([{ code: 'storage_failing' }])).toBe('the disk refuses writes');
    tray.update({ ...running, storage: trayStorage([]) });
    expect(t.image.path).toBe('/assets/tray-onTemplate.png');
    expect((t.menu!.template as MenuItemConstructorOptions[]).find((m) => m.id === 'storage')).toBeUndefined();
  });

  it('says when an upstream was set aside at start: attention icon, tooltip and a menu line that opens the console', () => {
    const openConsole = vi.fn();
    const tray = new TrayController({ iconDir: '/assets', platform: 'darwin', actions: { ...noActions, openConsole } });
    const t = electron.Tray.created[0]!;
    const warning = {
      code: 'upstream_set_aside',
      message:
        "/d/upstreams.json had an invalid upstream: set aside upstream 'bad' (upstreams[1]: timeout_ms: Invalid input); the other upstreams run.",
    };
    tray.update({ ...running, setAside: traySetAside([{ code: 'vault_file', message: '' }, warning]) });
    expect(t.image.path).toBe('/assets/tray-attentionTemplate.png');
    expect(t.tooltip).toBe('Gatehouse: on · upstream bad was set aside');
    const line = (t.menu!.template as MenuItemConstructorOptions[]).find((m) => m.id === 'set-aside')!;
    expect(line.label).toBe('upstream bad was set aside: invalid in upstreams.json…');
    (line.click as () => void)();
    expect(openConsole).toHaveBeenCalled();
    tray.update({ ...running, setAside: traySetAside([]) });
    expect(t.image.path).toBe('/assets/tray-onTemplate.png');
    expect((t.menu!.template as MenuItemConstructorOptions[]).find((m) => m.id === 'set-aside')).toBeUndefined();
  });

  it('uses coloured icons elsewhere, and a left click opens the console', () => {
    const openConsole = vi.fn();
    new TrayController({ iconDir: '/assets', platform: 'win32', actions: { ...noActions, openConsole } });
    const t = electron.Tray.created[0]!;
    expect(t.image.path).toBe('/assets/tray-off.png');
    expect(t.image.template).toBe(false);
    t.emit('click');
    expect(openConsole).toHaveBeenCalled();
  });
});

describe('tray against the real core', () => {
  let dir: string;
  let gw: Awaited<ReturnType<typeof openLocalCore>>;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-tray-'));
    gw = await openLocalCore({ dataDir: dir, vault: 'file', owner: 'service' });
  });
  afterEach(async () => {
    await gw.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Stage a page update the way an MCP client would, through the call pipeline. */
  async function stageTitle(id: number, title: string) {
    const admin = gw.users.list().find((u) => u.role === 'administrator')!;
    return gw.pipeline.call(
      'pages_update',
      { id, title },
      {
        user: admin,
        capabilities: new Set(ROLE_CAPABILITIES.administrator),
        token: null,
        request_id: `r-${id}`,
        client: 'test',
      },
    );
  }

  it('approving from the tray menu confirms the write in the core, recorded as decided in the tray', async () => {
    const tray = new TrayController({ iconDir: '/assets', platform: 'linux', actions: noActions });
    const keeper = new TrayStateKeeper((s) => tray.update(s));
    const reports: string[] = [];
    const dispatch = dispatchAs(gw.invoke, PRINCIPALS.tray);
    const actions = createTrayActions({
      dispatch: () => dispatch,
      openConsole: vi.fn(),
      setOpenAtLogin: async () => {},
      installUpdate: async () => ({ ok: true as const }),
      quit: vi.fn(),
      refresh: () => void keeper.refresh(),
      report: (title, m) => reports.push(`${title}: ${m}`),
    });
    gw.events.subscribe((e) => keeper.onEvent(e));
    await keeper.connect(dispatch);
    expect(keeper.current).toMatchObject({ phase: 'running', enabled: false, pendingTotal: 0 });
    // the real core's cloud.status, not connected: the tray says so and warns of nothing
    expect(keeper.current.cloud).toEqual({ connected: false, problem: null, quotas: [] });
    expect(
      (electron.Tray.created[0]!.menu!.template as MenuItemConstructorOptions[]).find((m) => m.id === 'cloud')!.label,
    ).toBe('Cloud: not connected');

    await stageTitle(1, 'Approved from the tray');
    await vi.waitFor(() => expect(keeper.current.pendingTotal).toBe(1));
    expect(electron.Tray.created[0]!.tooltip).toBe('Gatehouse: off · 1 pending approval');
    const item = keeper.current.pending[0]!;
    expect(item.tool).toBe('pages_update');

    expect(item.preview_hash).toMatch(/^[0-9a-f]{64}$/);
    actions.approve(item.id, item.preview_hash);
    await vi.waitFor(() => expect(keeper.current.pendingTotal).toBe(0));
    // it leaves the pending list as soon as its confirm records its intent (`applying`), before it is applied
    await vi.waitFor(() => expect(gw.staging.get(item.id).status).toBe('confirmed'));
    const page = await gw.dispatch('staged.get', { id: item.id });
    expect(page.ok && page.data.status).toBe('confirmed');
    expect(gw.siteStore.read().pages.find((p) => p.id === 1)?.title).toBe('Approved from the tray');
    expect(reports).toEqual([]);
    expect(gw.staging.get(item.id).decided_by).toEqual(PRINCIPALS.tray);
    const audit = await gw.audit.query({ result: 'confirmed', limit: 10 });
    expect(audit.entries.map((e) => [e.staged_id, e.principal])).toEqual([[item.id, PRINCIPALS.tray]]);
    // the decision's line carries what the approval was bound to: the preview the menu showed
    expect(audit.entries[0]!.binding).toMatchObject({
      preview: item.preview_hash,
      args: expect.stringMatching(/^[0-9a-f]{64}$/),
      definition: null,
    });
  });

  it('tells the person when the core refuses a tray action', async () => {
    const keeper = new TrayStateKeeper(() => {});
    const reports: string[] = [];
    const actions = createTrayActions({
      dispatch: () => gw.dispatch as ApiDispatch,
      openConsole: vi.fn(),
      setOpenAtLogin: async () => {},
      installUpdate: async () => ({ ok: true as const }),
      quit: vi.fn(),
      refresh: () => void keeper.refresh(),
      report: (title, m) => reports.push(`${title}: ${m}`),
    });
    actions.approve('stg_does_not_exist', null);
    await vi.waitFor(() => expect(reports).toHaveLength(1));
    expect(reports[0]).toMatch(/^Could not approve: /);
  });

  it('discards from the tray and switches the gateway through the core', async () => {
    const keeper = new TrayStateKeeper(() => {});
    const dispatch = gw.dispatch as ApiDispatch;
    const actions = createTrayActions({
      dispatch: () => dispatch,
      openConsole: vi.fn(),
      setOpenAtLogin: async () => {},
      installUpdate: async () => ({ ok: true as const }),
      quit: vi.fn(),
      refresh: () => void keeper.refresh(),
      report: vi.fn(),
    });
    gw.events.subscribe((e) => keeper.onEvent(e));
    await keeper.connect(dispatch);
    await stageTitle(2, 'Never applied');
    await vi.waitFor(() => expect(keeper.current.pendingTotal).toBe(1));
    actions.discard(keeper.current.pending[0]!.id);
    await vi.waitFor(() => expect(keeper.current.pendingTotal).toBe(0));
    expect(gw.staging.list({ status: 'discarded' })).toHaveLength(1);

    actions.setEnabled(true);
    await vi.waitFor(() => expect(keeper.current.enabled).toBe(true));
    expect(gw.settings.get().enabled).toBe(true);
  });

  it('shows a failed start and refuses actions without a service', async () => {
    const keeper = new TrayStateKeeper(() => {});
    const report = vi.fn();
    keeper.failed('port 7823 on 127.0.0.1 is in use');
    const actions = createTrayActions({
      dispatch: () => null,
      openConsole: vi.fn(),
      setOpenAtLogin: async () => {},
      installUpdate: async () => ({ ok: true as const }),
      quit: vi.fn(),
      refresh: vi.fn(),
      report,
    });
    actions.approve('x', null);
    await vi.waitFor(() =>
      expect(report).toHaveBeenCalledWith('Could not approve', 'The Gatehouse service is not running.'),
    );
    const refused = createTrayActions({
      dispatch: () => null,
      openConsole: vi.fn(),
      setOpenAtLogin: async () => {},
      installUpdate: async () => ({ ok: false as const, reason: 'no verified update is ready' }),
      quit: vi.fn(),
      refresh: vi.fn(),
      report,
    });
    refused.installUpdate();
    await vi.waitFor(() =>
      expect(report).toHaveBeenCalledWith('Could not install the update', 'no verified update is ready'),
    );
    expect(keeper.current).toMatchObject({ phase: 'failed', error: 'port 7823 on 127.0.0.1 is in use' });
  });
});
