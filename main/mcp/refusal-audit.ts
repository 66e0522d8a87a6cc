import { HTTP_REFUSAL, type AuditResult } from '../contract/audit.ts';
import type { ErrorCode } from '../contract/errors.ts';
import { tokenPrincipal } from '../contract/principal.ts';
import type { Auditor } from '../core/calls/auditor.ts';
import type { Clock } from '../lib/clock.ts';
import { RateLimiter } from '../lib/rate-limiter.ts';

/** Refusal entries written per minute for each kind of refusal (error code); the rest are counted. */
export const REFUSALS_AUDITED_PER_MINUTE = 60;

const RESULT: Partial<Record<ErrorCode, AuditResult>> = {
  unauthorized: 'denied',
  forbidden: 'denied',
  gateway_disabled: 'denied',
  rate_limited: 'rate_limited',
};

export interface Refused {
  code: ErrorCode;
  requestId: string;
  address: string;
  /** once authentication succeeded: who (never the token itself) */
  token?: { id: string; preview: string; user_id: string; login: string } | null;
}

/**
 * Requests the endpoint refuses at the HTTP level (401, 403, 413, 429, the
 * gateway switched off, malformed bodies) are audited as HTTP_REFUSAL with
 * the client's address (and the token's id once it authenticated, never the
 * token). A flood must not fill the disk: at most REFUSALS_AUDITED_PER_MINUTE
 * entries per error code per minute; refusals past that are counted, and the
 * next entry of that code says how many were not written (in `target`).
 */
export class RefusalAudit {
  private readonly window = new RateLimiter(64);
  private readonly skipped = new Map<string, number>();

  constructor(
    private readonly auditor: Auditor,
    private readonly clock: Clock,
    private readonly perMinute = REFUSALS_AUDITED_PER_MINUTE,
  ) {}

  record(r: Refused): void {
    if (!this.window.check(r.code, this.perMinute, this.clock.now()).allowed) {
      this.skipped.set(r.code, (this.skipped.get(r.code) ?? 0) + 1);
      return;
    }
    const skipped = this.skipped.get(r.code) ?? 0;
    this.skipped.delete(r.code);
    this.auditor.record(
      {
        tool: HTTP_REFUSAL,
        write: false,
        result: RESULT[r.code] ?? 'error',
        error_code: r.code,
        target: skipped
          ? `${skipped} earlier ${r.code} refusal(s) not audited (over ${this.perMinute} a minute)`
          : null,
      },
      {
        principal: r.token ? tokenPrincipal(r.token, { id: r.token.user_id, login: r.token.login }, 'mcp') : null,
        request_id: r.requestId,
        client: `address ${r.address}`,
      },
    );
  }
}
