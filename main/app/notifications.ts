import { Notification } from 'electron';
import type { ApiEvent } from '../contract/api.ts';
import type { TrayQuota } from './tray-cloud.ts';
import { trayText } from './tray-text.ts';

/** Bounds for text from outside (clients, the cloud) in a notification; each piece goes through trayText. */
const TITLE_PART_MAX = 64;
const BODY_PART_MAX = 200;
const NAME_MAX = 80;
const PROBLEM_MAX = 400;

const BURST = 3;
const BURST_WINDOW_MS = 10_000;
const SEEN_MAX = 2000;

/**
 * One native notification per new staged write; clicking it opens Approvals.
 * An agent staging fifty writes at once gets three notifications and one
 * "and 47 more", not fifty.
 */
export function createStagedNotifier(deps: { openApprovals: () => void; now?: () => number }) {
  const now = deps.now ?? Date.now;
  const seen = new Set<string>();
  const live = new Set<Notification>();
  let recent: number[] = [];
  let held = 0;
  let flush: ReturnType<typeof setTimeout> | null = null;

  const show = (title: string, body: string) => {
    const n = new Notification({ title, body });
    // keep a reference until it is gone, or some platforms drop the click handler
    live.add(n);
    n.on('click', () => deps.openApprovals());
    n.on('close', () => live.delete(n));
    n.show();
  };

  return function onEvent(event: ApiEvent): void {
    if (event.type !== 'staged' || event.item.status !== 'pending' || seen.has(event.item.id)) return;
    seen.add(event.item.id);
    if (seen.size > SEEN_MAX) seen.delete(seen.values().next().value as string);
    if (!Notification.isSupported()) return;
    const t = now();
    recent = recent.filter((x) => t - x < BURST_WINDOW_MS);
    if (recent.length >= BURST) {
      held++;
      flush ??= setTimeout(() => {
        flush = null;
        if (held) show('More approvals needed', `${held} more staged write${held === 1 ? '' : 's'} waiting in Gatehouse`);
        held = 0;
      }, BURST_WINDOW_MS);
      return;
    }
    recent.push(t);
    const { item } = event;
    const who = item.token_label ?? item.client;
    show(`Approval needed: ${trayText(item.tool, TITLE_PART_MAX)}`, `${trayText(item.preview.summary, BODY_PART_MAX)}${who ? `\nAsked by ${trayText(who, NAME_MAX)}` : ''}`);
  };
}

const QUOTA_SEEN_MAX = 200;

/**
 * One notification when a cloud quota becomes used up; clicking it opens
 * Usage. The same quota in the same period is not announced again (its key
 * holds the reset time); "near" ones are not announced: they show in the
 * tray and the console.
 */
export function createQuotaNotifier(deps: { openUsage: () => void }) {
  const seen = new Set<string>();
  const live = new Set<Notification>();
  return function onQuotas(quotas: readonly TrayQuota[]): void {
    for (const q of quotas) {
      if (q.level !== 'exceeded') continue;
      if (seen.has(q.key)) continue;
      seen.add(q.key);
      if (seen.size > QUOTA_SEEN_MAX) seen.delete(seen.values().next().value as string);
      if (!Notification.isSupported()) continue;
      const n = new Notification({ title: 'A cloud quota is used up', body: `${trayText(q.text, BODY_PART_MAX)}. Calls that need it are refused until then (quota_exceeded).` });
      live.add(n);
      n.on('click', () => deps.openUsage());
      n.on('close', () => live.delete(n));
      n.show();
    }
  };
}

/** One notification per verified update that is ready; clicking it opens the Cloud screen (the tray menu installs it). */
export function createUpdateNotifier(deps: { openCloud: () => void }) {
  let told: string | null = null;
  const live = new Set<Notification>();
  return function onUpdate(version: string | null): void {
    if (!version || version === told) return;
    told = version;
    if (!Notification.isSupported()) return;
    const n = new Notification({ title: `Gatehouse ${trayText(version, TITLE_PART_MAX)} is ready to install`, body: 'Downloaded and checked against the signed release manifest. Install it from the tray menu when it suits you.' });
    live.add(n);
    n.on('click', () => deps.openCloud());
    n.on('close', () => live.delete(n));
    n.show();
  };
}

/**
 * A problem told to the person (a tray action that failed, a start that
 * failed): the message may quote the gateway, a plugin or a client, so it is
 * one bounded line like every other text from outside.
 */
export function showProblem(title: string, message: string): void {
  if (Notification.isSupported()) new Notification({ title, body: trayText(message, PROBLEM_MAX) }).show();
}
