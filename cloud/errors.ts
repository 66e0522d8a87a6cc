import { CLOUD_ERRORS, type CloudErrorCode } from '../main/contract/cloud/index.ts';

/**
 * The service's one error type: a code from the contract, a message that
 * helps fix the problem (never a secret), details that go into the error
 * body, and the HTTP status (the code's default unless a case needs another,
 * like invalid_site's 403 for a disconnected site).
 */
export class CloudError extends Error {
  readonly status: number;
  constructor(
    readonly code: CloudErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    opts: { status?: number; retryAfter?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'CloudError';
    this.status = opts.status ?? CLOUD_ERRORS[code].status;
    this.retryAfter = opts.retryAfter;
    this.headers = opts.headers ?? {};
  }
  readonly retryAfter: number | undefined;
  /** extra answer headers (WWW-Authenticate for unauthorized) */
  readonly headers: Record<string, string>;
}
