import type { ApiEvent } from '../../contract/api.ts';
import type { StagedView } from '../../contract/staged.ts';
import { maskSecretText } from '../../lib/secret-scan.ts';

/**
 * What the desktop tells the person about pending writes (docs/staging.md,
 * "Reaching the person"), decided here and only wired in main/app: one
 * notice per new pending write, never twice for the same write; a burst is
 * folded into one "N more" notice; the text is the write's summary and who
 * asked, with anything secret-shaped masked; Approve / Discard are offered
 * only for a write that can be approved (pending, its token neither revoked
 * nor narrowed away). A notice never approves anything by itself: its
 * buttons are the OS's, pressed by the person, and the approval names the
 * preview hash the notice was made from.
 */
export interface NoticeLimits {
  /** notices shown within `windowMs` before the rest are folded */
  burst: number;
  windowMs: number;
  /** writes remembered as already announced */
  seenMax: number;
}
export const NOTICE_LIMITS: NoticeLimits = { burst: 3, windowMs: 10_000, seenMax: 2000 };

export interface WriteNotice {
  kind: 'write';
  staged_id: string;
  /** what an Approve from this notice names: the preview the notice was made from */
  preview_hash: string | null;
  /** the tool, the summary and who asked, secrets masked; the shell makes each one clean bounded line */
  tool: string;
  summary: string;
  who: string | null;
  /** offer Approve / Discard buttons (where the platform has them) */
  actions: boolean;
}
export interface HeldNotice {
  kind: 'held';
  title: string;
  body: string;
}

/** The part of a text that fits a notification line, with secrets masked; the shell still makes it one clean line. */
const safeText = (text: string, max: number): string =>
  maskSecretText(text.length > max * 4 ? text.slice(0, max * 4) : text);

/** The words of a notice for one pending write. */
export function noticeText(
  item: Pick<StagedView, 'tool' | 'preview' | 'token_label' | 'client'>,
): Pick<WriteNotice, 'tool' | 'summary' | 'who'> {
  const who = item.token_label ?? item.client;
  return {
    tool: safeText(item.tool, 64),
    summary: safeText(item.preview.summary, 200),
    who: who ? safeText(who, 80) : null,
  };
}

/** The count beside the tray icon (macOS title, badge): empty when nothing waits. */
export const pendingBadge = (n: number): string => (n <= 0 ? '' : n > 99 ? '99+' : String(n));

export class ApprovalNotices {
  private readonly seen = new Set<string>();
  private recent: number[] = [];
  private held = 0;

  constructor(
    private readonly now: () => number,
    private readonly limits: NoticeLimits = NOTICE_LIMITS,
  ) {}

  /**
   * A live event in: the notice to show now, or null. `hold` is true when a
   * write was folded: the caller asks `flush()` once `limits.windowMs` later.
   */
  onEvent(event: ApiEvent): { show: WriteNotice | null; hold: boolean } {
    if (event.type !== 'staged' || event.item.status !== 'pending' || this.seen.has(event.item.id))
      return { show: null, hold: false };
    this.seen.add(event.item.id);
    if (this.seen.size > this.limits.seenMax) this.seen.delete(this.seen.values().next().value as string);
    const t = this.now();
    this.recent = this.recent.filter((x) => t - x < this.limits.windowMs);
    if (this.recent.length >= this.limits.burst) {
      this.held++;
      return { show: null, hold: true };
    }
    this.recent.push(t);
    const { item } = event;
    return {
      show: {
        kind: 'write',
        staged_id: item.id,
        preview_hash: item.preview_hash ?? null,
        ...noticeText(item),
        actions: !item.blocked,
      },
      hold: false,
    };
  }

  /** The folded writes as one notice (once), or null when none were held. */
  flush(): HeldNotice | null {
    const n = this.held;
    this.held = 0;
    return n
      ? {
          kind: 'held',
          title: 'More approvals needed',
          body: `${n} more staged write${n === 1 ? '' : 's'} waiting in Gatehouse`,
        }
      : null;
  }
}
