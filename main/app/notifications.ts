import { Notification } from 'electron';
import type { ApiEvent } from '../contract/api.ts';
import type { TrayQuota } from './tray-cloud.ts';
import { trayText } from './tray-text.ts';
import { ApprovalNotices, NOTICE_LIMITS, type WriteNotice } from '../core/staging/approval-notices.ts';

/** Bounds for text from outside (clients, the cloud) in a notification; each piece goes through trayText. */
const TITLE_PART_MAX = 64;
const BODY_PART_MAX = 200;
const NAME_MAX = 80;
const PROBLEM_MAX = 400;

/**
 * One native notification per new staged write (what and when: ApprovalNotices
 * in main/core). Where the platform has notification buttons (macOS), it
 * carries Approve and Discard: pressing one is the person's own action in the
 * OS, and the approval names the preview the notification showed. Elsewhere,
 * and on a click, it opens the console on that write. A burst folds into
 * "N more".
 */
export function createStagedNotifier(deps: {
  openApprovals: (stagedId?: string) => void;
  approve?: (stagedId: string, previewHash: string | null) => void;
  discard?: (stagedId: string) => void;
  platform?: NodeJS.Platform;
  now?: () => number;
}) {
  const planner = new ApprovalNotices(deps.now ?? Date.now);
  const buttons = (deps.platform ?? process.platform) === 'darwin' && !!deps.approve && !!deps.discard;
  const live = new Set<Notification>();
  let flush: ReturnType<typeof setTimeout> | null = null;

  const show = (title: string, body: string, notice?: WriteNotice) => {
    const withActions = buttons && notice?.actions;
    const n = new Notification({
      title,
      body,
      ...(withActions
        ? {
            actions: [
              { type: 'button' as const, text: 'Approve' },
              { type: 'button' as const, text: 'Discard' },
            ],
          }
        : {}),
    });
    // keep a reference until it is gone, or some platforms drop the click handler
    live.add(n);
    n.on('click', () => deps.openApprovals(notice?.staged_id));
    // 'action' is emitted only when the person presses a button the OS drew
    if (withActions && notice)
      n.on('action', (_e: unknown, index: number) =>
        index === 0 ? deps.approve!(notice.staged_id, notice.preview_hash) : deps.discard!(notice.staged_id),
      );
    n.on('close', () => live.delete(n));
    n.show();
  };

  return function onEvent(event: ApiEvent): void {
    if (!Notification.isSupported()) return;
    const { show: notice, hold } = planner.onEvent(event);
    if (notice)
      show(
        `Approval needed: ${trayText(notice.tool, TITLE_PART_MAX)}`,
        `${trayText(notice.summary, BODY_PART_MAX)}${notice.who ? `\nAsked by ${trayText(notice.who, NAME_MAX)}` : ''}`,
        notice,
      );
    if (hold) {
      flush ??= setTimeout(() => {
        flush = null;
        const held = planner.flush();
        if (held) show(held.title, held.body);
      }, NOTICE_LIMITS.windowMs);
    }
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
      const n = new Notification({
        title: 'A cloud quota is used up',
        body: `${trayText(q.text, BODY_PART_MAX)}. Calls that need it are refused until then (quota_exceeded).`,
      });
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
    const n = new Notification({
      title: `Gatehouse ${trayText(version, TITLE_PART_MAX)} is ready to install`,
      body: 'Downloaded and checked against the signed release manifest. Install it from the tray menu when it suits you.',
    });
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
