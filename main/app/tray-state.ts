import type { ApiDispatch, ApiEvent } from '../contract/api.ts';
import type { ConsoleScreen } from './app-url.ts';
import { NO_CLOUD, trayCloud } from './tray-cloud.ts';
import { INITIAL_TRAY_STATE, pendingItems, reviewItems, signInItems, traySetAside, trayStorage } from './tray-menu.ts';
import type { TrayActions, TrayState } from './tray-menu.ts';

/**
 * Keeps the tray's state in step with the core: reads health and the
 * pending list at start and after every event that may change them.
 * Refreshes never overlap; a burst of events causes at most one more.
 */
export class TrayStateKeeper {
  private state: TrayState = INITIAL_TRAY_STATE;
  private dispatch: ApiDispatch | null = null;
  private running: Promise<void> | null = null;
  private again = false;

  constructor(private readonly onChange: (state: TrayState) => void) {}

  get current(): TrayState {
    return this.state;
  }

  set(patch: Partial<TrayState>): void {
    this.state = { ...this.state, ...patch };
    this.onChange(this.state);
  }

  connect(dispatch: ApiDispatch): Promise<void> {
    this.dispatch = dispatch;
    this.set({ phase: 'running', error: null });
    return this.refresh();
  }

  failed(message: string): void {
    this.dispatch = null;
    this.set({ phase: 'failed', error: message, pending: [], pendingTotal: 0, cloud: NO_CLOUD, signIns: [] });
  }

  onEvent(event: ApiEvent): void {
    if (event.type === 'settings') this.set({ enabled: event.settings.enabled });
    if (event.type === 'staged' || event.type === 'health' || event.type === 'settings') void this.refresh();
  }

  refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        const dispatch = this.dispatch;
        if (!dispatch) return;
        // cloud.status answers from what the service holds: no request to the gateway on a tray refresh
        const [health, staged, cloud, upstreams] = await Promise.all([
          dispatch('health.get', {}),
          dispatch('staged.list', { status: 'pending' }),
          dispatch('cloud.status', {}),
          dispatch('upstreams.list', {}),
        ]);
        if (this.dispatch !== dispatch) return;
        this.set({
          ...(health.ok
            ? {
                enabled: health.data.enabled,
                storage: trayStorage(health.data.warnings),
                setAside: traySetAside(health.data.warnings),
              }
            : {}),
          ...(staged.ok ? { pending: pendingItems(staged.data), pendingTotal: staged.data.length } : {}),
          ...(upstreams.ok ? { signIns: signInItems(upstreams.data), review: reviewItems(upstreams.data) } : {}),
          ...(cloud.ok || health.ok
            ? { cloud: trayCloud(cloud.ok ? cloud.data : null, health.ok ? health.data : null) }
            : {}),
        });
      } while (this.again);
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}

export interface TrayActionDeps {
  dispatch: () => ApiDispatch | null;
  openConsole: (screen?: ConsoleScreen, focus?: string) => void;
  setOpenAtLogin: (enabled: boolean) => Promise<void>;
  /** hand the verified update to the system installer (only ever from the person's click) */
  installUpdate: () => Promise<{ ok: true } | { ok: false; reason: string }>;
  quit: () => void;
  refresh: () => void;
  /** tell the person something went wrong (a native notification) */
  report: (title: string, message: string) => void;
}

/** What the tray's menu items do: each a call into the core, then a refresh. */
export function createTrayActions(deps: TrayActionDeps): TrayActions {
  const call = async (title: string, run: (d: ApiDispatch) => Promise<{ ok: boolean; message?: string }>) => {
    const dispatch = deps.dispatch();
    if (!dispatch) return deps.report(title, 'The Gatehouse service is not running.');
    const result = await run(dispatch);
    if (!result.ok) deps.report(title, result.message ?? 'failed');
    deps.refresh();
  };
  return {
    openConsole: (screen, focus) => deps.openConsole(screen, focus),
    approve: (id, previewHash) =>
      void call('Could not approve', (d) =>
        d('staged.confirm', { id, ...(previewHash ? { preview_hash: previewHash } : {}) }),
      ),
    discard: (id) => void call('Could not discard', (d) => d('staged.discard', { id })),
    setEnabled: (enabled) =>
      void call(enabled ? 'Could not switch the gateway on' : 'Could not switch the gateway off', (d) =>
        d('settings.update', { enabled }),
      ),
    setOpenAtLogin: (enabled) => {
      deps
        .setOpenAtLogin(enabled)
        .then(deps.refresh, (e: unknown) =>
          deps.report('Could not change start at login', e instanceof Error ? e.message : String(e)),
        );
    },
    installUpdate: () => {
      deps.installUpdate().then(
        (r) => {
          if (!r.ok) deps.report('Could not install the update', r.reason);
        },
        (e: unknown) => deps.report('Could not install the update', e instanceof Error ? e.message : String(e)),
      );
    },
    quit: () => deps.quit(),
  };
}
