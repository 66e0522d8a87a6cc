/**
 * An upstream's log messages (`notifications/message`) on their way to the
 * clients of that upstream (docs/upstreams.md, "Logs"): already masked of the
 * values it was given (connection.ts), here named after the upstream, bounded
 * in size and in rate. A server that logs in a loop cannot flood every client:
 * past MAX_LOGS_PER_WINDOW in a window the rest are dropped and counted, and
 * the first message of the next window is preceded by a notice saying how many.
 */

/** The levels of RFC 5424 that MCP names, least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const isLogLevel = (v: unknown): v is LogLevel => typeof v === 'string' && LOG_LEVELS.includes(v as LogLevel);
/** Whether a message at `level` passes a threshold (none: every message does). */
export const passes = (level: LogLevel, threshold: LogLevel | undefined): boolean =>
  threshold === undefined || LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);

/** Messages of one upstream passed on per window; the rest of the window's are dropped and counted. */
export const MAX_LOGS_PER_WINDOW = 50;
export const LOG_WINDOW_MS = 10_000;
/** The most of one message's `data` passed on, as JSON text: larger data is cut to a string of this length. */
export const MAX_LOG_DATA_CHARS = 8192;

export interface LogMessage {
  level: LogLevel;
  /** `<upstream id>` or `<upstream id>/<its own logger>`: which upstream says it */
  logger: string;
  data: unknown;
}

export interface LogCounts {
  forwarded: number;
  dropped: number;
}

export class LogRelay {
  private readonly counts: LogCounts = { forwarded: 0, dropped: 0 };
  private windowStart = Number.NEGATIVE_INFINITY;
  private inWindow = 0;
  private droppedInWindow = 0;

  constructor(
    private readonly id: string,
    private readonly send: (m: LogMessage) => void,
    private readonly now: () => number = Date.now,
  ) {}

  snapshot(): LogCounts {
    return { ...this.counts };
  }

  /** One notifications/message's params as the upstream sent them (masked). */
  take(params: unknown): void {
    const t = this.now();
    if (t - this.windowStart >= LOG_WINDOW_MS) {
      if (this.droppedInWindow) this.send(this.notice(this.droppedInWindow));
      this.windowStart = t;
      this.inWindow = 0;
      this.droppedInWindow = 0;
    }
    const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
    // A level clients cannot parse would fail the notification at their end: not passed on, counted as dropped.
    if (!isLogLevel(p.level) || this.inWindow >= MAX_LOGS_PER_WINDOW) {
      this.counts.dropped++;
      this.droppedInWindow++;
      return;
    }
    this.inWindow++;
    this.counts.forwarded++;
    const own = typeof p.logger === 'string' && p.logger ? p.logger.slice(0, 200) : null;
    this.send({ level: p.level, logger: own ? `${this.id}/${own}` : this.id, data: bounded(p.data) });
  }

  private notice(n: number): LogMessage {
    return {
      level: 'warning',
      logger: this.id,
      data: `Gatehouse dropped ${n} log message${n === 1 ? '' : 's'} of upstream '${this.id}': more than ${MAX_LOGS_PER_WINDOW} in ${LOG_WINDOW_MS / 1000} s, or a level MCP does not name`,
    };
  }
}

function bounded(data: unknown): unknown {
  const text = typeof data === 'string' ? data : (JSON.stringify(data) ?? 'null');
  if (text.length <= MAX_LOG_DATA_CHARS) return data;
  return `${text.slice(0, MAX_LOG_DATA_CHARS)} [cut by Gatehouse at ${MAX_LOG_DATA_CHARS} of ${text.length} characters]`;
}
