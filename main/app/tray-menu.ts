import type { MenuItemConstructorOptions } from 'electron';
import type { StagedView } from '../contract/staged.ts';
import type { ConsoleScreen } from './app-url.ts';
import { NO_CLOUD, cloudLine, quotaTooltip } from './tray-cloud.ts';
import { trayText } from './tray-text.ts';
import type { TrayCloud } from './tray-cloud.ts';

/** What the tray shows; everything the menu needs, nothing else. */
export interface TrayState {
  phase: 'starting' | 'running' | 'failed';
  enabled: boolean;
  /** the first pending writes, soonest to expire first (at most MENU_PENDING_MAX) */
  pending: PendingItem[];
  pendingTotal: number;
  /** why the service is not running (phase 'failed') */
  error: string | null;
  openAtLogin: boolean;
  /** the cloud connection and its quota warnings */
  cloud: TrayCloud;
  /** a downloaded update whose manifest and file verified, waiting for the person to install it */
  update: string | null;
  /** the disk refuses writes, in words (tool calls are refused meanwhile), or null */
  storage: string | null;
  /** upstreams set aside at start for an invalid field in upstreams.json (their ids), or none */
  setAside: string[];
  /** OAuth upstreams whose sign-in ran out (docs/oauth.md): one "sign in again" item each */
  signIns: SignInItem[];
  /** upstream definitions held for review (offered to no client until a person approves them), and the first server with some */
  review: { count: number; first: string | null };
}

export interface SignInItem {
  id: string;
  reason: string | null;
}

export interface PendingItem {
  id: string;
  tool: string;
  summary: string;
  who: string | null;
  /** the preview the menu shows: an approval names it, so a changed write is refused */
  preview_hash: string | null;
  /** set when the write may not be approved (its token revoked or narrowed): the menu offers only Discard */
  blocked: StagedView['blocked'];
}

export interface TrayActions {
  /** `focus`: the item the screen selects (a staged write, an upstream) */
  openConsole(screen?: ConsoleScreen, focus?: string): void;
  approve(id: string, previewHash: string | null): void;
  discard(id: string): void;
  setEnabled(enabled: boolean): void;
  setOpenAtLogin(enabled: boolean): void;
  installUpdate(): void;
  quit(): void;
}

const MENU_PENDING_MAX = 10;
export type TrayIconState = 'off' | 'on' | 'attention';

export const INITIAL_TRAY_STATE: TrayState = {
  phase: 'starting',
  enabled: false,
  pending: [],
  pendingTotal: 0,
  error: null,
  openAtLogin: false,
  cloud: NO_CLOUD,
  update: null,
  storage: null,
  setAside: [],
  signIns: [],
  review: { count: 0, first: null },
};

export function pendingItems(list: readonly StagedView[]): PendingItem[] {
  return list
    .filter((s) => s.status === 'pending')
    .sort((a, b) => a.expires_at.localeCompare(b.expires_at))
    .slice(0, MENU_PENDING_MAX)
    .map((s) => ({
      id: s.id,
      tool: s.tool,
      // an upstream write's target as read at staging: "a.txt: 1 line changed"
      summary: s.preview.current ? `${s.preview.summary} (${s.preview.current.summary})` : s.preview.summary,
      who: s.token_label ?? s.client ?? null,
      preview_hash: s.preview_hash ?? null,
      blocked: s.blocked ?? null,
    }));
}

/** The upstreams a person has to sign in to again (never those they signed out of themselves). */
export function signInItems(
  list: readonly { id: string; oauth?: { state: string; reason: string | null } | undefined }[],
): SignInItem[] {
  return list
    .filter((u) => u.oauth?.state === 'sign_in_required' && u.oauth.reason !== 'signed out')
    .map((u) => ({ id: u.id, reason: u.oauth!.reason }));
}

/** Tools and prompts of enabled upstreams waiting for review (the health report's definitions_review warning, counted from the upstreams list). */
export function reviewItems(
  list: readonly {
    id: string;
    enabled: boolean;
    tools: { quarantined: number };
    prompts?: { quarantined: number } | undefined;
  }[],
): TrayState['review'] {
  const waiting = list
    .filter((u) => u.enabled)
    .map((u) => ({ id: u.id, n: u.tools.quarantined + (u.prompts?.quarantined ?? 0) }))
    .filter((u) => u.n > 0);
  return { count: waiting.reduce((sum, u) => sum + u.n, 0), first: waiting[0]?.id ?? null };
}

const waitingForReview = (n: number) => `${n} ${n === 1 ? 'definition waits' : 'definitions wait'} for review`;

export function trayIconState(state: TrayState): TrayIconState {
  if (state.phase === 'failed' || state.pendingTotal > 0) return 'attention';
  if (state.phase === 'running' && state.signIns.length > 0) return 'attention';
  if (state.phase === 'running' && state.storage) return 'attention';
  if (state.phase === 'running' && state.setAside.length > 0) return 'attention';
  if (state.phase === 'running' && state.review.count > 0) return 'attention';
  if (state.phase === 'running' && state.cloud.quotas.some((q) => q.level === 'exceeded')) return 'attention';
  return state.phase === 'running' && state.enabled ? 'on' : 'off';
}

const approvals = (n: number) => `${n} pending approval${n === 1 ? '' : 's'}`;

export function trayTooltip(state: TrayState): string {
  if (state.phase === 'starting') return 'Gatehouse: starting…';
  if (state.phase === 'failed') return 'Gatehouse: the service is not running';
  const parts = [`Gatehouse: ${state.enabled ? 'on' : 'off'}`];
  if (state.storage) parts.push(state.storage);
  if (state.setAside.length) parts.push(setAsideWords(state.setAside));
  if (state.pendingTotal) parts.push(approvals(state.pendingTotal));
  if (state.review.count) parts.push(waitingForReview(state.review.count));
  const quota = quotaTooltip(state.cloud);
  if (quota) parts.push(quota);
  return parts.join(' · ');
}

function statusLine(state: TrayState): string {
  if (state.phase === 'starting') return 'Gatehouse is starting…';
  if (state.phase === 'failed') return `Not running: ${state.error ?? 'the service failed to start'}`;
  return state.enabled ? 'Gatehouse is on' : 'Gatehouse is off: MCP clients are refused';
}

/**
 * Menu labels: short, one line, no control characters (`trayText`: cloud and
 * client text reach the menu), and `&` kept literal (Windows reads it as a
 * mnemonic). Every label that carries text from outside goes through here.
 */
export function menuLabel(text: string, max = 60): string {
  return trayText(text, max).replace(/&/g, '&&');
}

/** The tray menu, built from the state alone: the same state always gives the same menu. */
/** The ids of the upstreams the health report says were set aside (upstreams-salvage.ts), in its words. */
export function traySetAside(warnings: readonly { code: string; message: string }[]): string[] {
  const w = warnings.find((x) => x.code === 'upstream_set_aside');
  return w ? [...w.message.matchAll(/upstream '([^']{1,64})'/g)].map((m) => m[1]!) : [];
}

const setAsideWords = (ids: readonly string[]) =>
  ids.length === 1 ? `upstream ${ids[0]} was set aside` : `${ids.length} upstreams were set aside`;

/** The tray's words for a storage warning of the health report (storage_full, storage_failing), or null. */
export function trayStorage(warnings: readonly { code: string }[]): string | null {
  const w = warnings.find((x) => x.code === 'storage_full' || x.code === 'storage_failing');
  return !w ? null : w.code === 'storage_full' ? 'the disk is full' : 'the disk refuses writes';
}

const TRAY_BLOCKED: Record<NonNullable<StagedView['blocked']>, string> = {
  token_revoked: 'Its token was revoked: cannot be approved',
  token_narrowed: 'Its token may no longer make it: cannot be approved',
  policy_denied: 'The policy now forbids it: cannot be approved',
};

export function buildTrayMenu(state: TrayState, act: TrayActions): MenuItemConstructorOptions[] {
  const running = state.phase === 'running';
  const items: MenuItemConstructorOptions[] = state.pending.map((p) => ({
    label: menuLabel(`${p.summary} (${p.tool})`),
    submenu: [
      { label: menuLabel(p.who ? `Asked by ${p.who}` : 'Asked by an MCP client'), enabled: false },
      p.blocked
        ? { label: TRAY_BLOCKED[p.blocked], enabled: false }
        : { label: 'Approve', click: () => act.approve(p.id, p.preview_hash) },
      { label: 'Discard', click: () => act.discard(p.id) },
      { type: 'separator' },
      { label: 'Show in the console', click: () => act.openConsole('approvals') },
    ],
  }));
  if (state.pendingTotal > state.pending.length) {
    items.push(
      { type: 'separator' },
      {
        label: `${state.pendingTotal - state.pending.length} more in the console…`,
        click: () => act.openConsole('approvals'),
      },
    );
  }
  if (items.length === 0) items.push({ label: 'Nothing is waiting', enabled: false });

  return [
    { id: 'status', label: menuLabel(statusLine(state), 80), enabled: false },
    ...(running && state.storage
      ? [
          {
            id: 'storage',
            label: menuLabel(`${state.storage}: tool calls are refused`, 80),
            click: () => act.openConsole(),
          },
        ]
      : []),
    ...(running && state.setAside.length
      ? [
          {
            id: 'set-aside',
            label: menuLabel(`${setAsideWords(state.setAside)}: invalid in upstreams.json…`, 80),
            click: () => act.openConsole(),
          },
        ]
      : []),
    ...(running ? signInMenu(state.signIns, act) : []),
    ...(running && state.review.count
      ? [
          {
            id: 'review',
            // a client calling one of them gets "unknown tool": the person has to know
            label: menuLabel(`${waitingForReview(state.review.count)}…`, 80),
            click: () => act.openConsole('upstreams', state.review.first ?? undefined),
          },
        ]
      : []),
    { type: 'separator' },
    { id: 'open', label: 'Open the console', click: () => act.openConsole() },
    {
      id: 'pending',
      label: state.pendingTotal ? `Pending approvals (${state.pendingTotal})` : 'Pending approvals',
      enabled: running,
      submenu: items,
    },
    { type: 'separator' },
    ...cloudItems(state, act),
    {
      id: 'gateway',
      label: 'Gateway on',
      type: 'checkbox',
      checked: running && state.enabled,
      enabled: running,
      click: () => act.setEnabled(!state.enabled),
    },
    {
      id: 'login',
      label: 'Start at login',
      type: 'checkbox',
      checked: state.openAtLogin,
      click: () => act.setOpenAtLogin(!state.openAtLogin),
    },
    { type: 'separator' },
    ...(state.update
      ? [{ id: 'update', label: menuLabel(`Install Gatehouse ${state.update}…`), click: () => act.installUpdate() }]
      : []),
    { id: 'quit', label: 'Quit Gatehouse', click: () => act.quit() },
  ];
}

const MENU_QUOTAS_MAX = 3;

/** The cloud line (opens the Cloud screen) and the quotas that need attention (open Usage), only while the service runs. */
function cloudItems(state: TrayState, act: TrayActions): MenuItemConstructorOptions[] {
  if (state.phase !== 'running') return [];
  const { cloud } = state;
  const quotas = cloud.quotas.slice(0, MENU_QUOTAS_MAX).map((q, i): MenuItemConstructorOptions => ({
    id: `quota-${i}`,
    label: menuLabel(`${q.level === 'exceeded' ? '⚠ ' : ''}${q.text}`, 80),
    click: () => act.openConsole('usage'),
  }));
  if (cloud.quotas.length > MENU_QUOTAS_MAX)
    quotas.push({
      label: `${cloud.quotas.length - MENU_QUOTAS_MAX} more quota warnings…`,
      click: () => act.openConsole('usage'),
    });
  return [
    { id: 'cloud', label: menuLabel(cloudLine(cloud), 80), click: () => act.openConsole('cloud') },
    ...quotas,
    { type: 'separator' },
  ];
}

const MENU_SIGN_INS_MAX = 5;

/** One "sign in again" item per upstream concerned: it opens the console on that upstream, where the person signs in (never a browser from here). */
function signInMenu(list: readonly SignInItem[], act: TrayActions): MenuItemConstructorOptions[] {
  const items = list.slice(0, MENU_SIGN_INS_MAX).map((u): MenuItemConstructorOptions => ({
    id: `signin-${u.id}`,
    label: menuLabel(`Sign in again: ${u.id}`),
    ...(u.reason ? { toolTip: trayText(u.reason, 200) } : {}),
    click: () => act.openConsole('upstreams', u.id),
  }));
  if (list.length > MENU_SIGN_INS_MAX)
    items.push({
      id: 'signin-more',
      label: `${list.length - MENU_SIGN_INS_MAX} more sign-ins in the console…`,
      click: () => act.openConsole('upstreams'),
    });
  return items;
}
