import { HTTP_STATUS, type ErrorCode } from '../../contract/errors.ts';

/**
 * A refusal the HTTP edge answers itself: status, a string code from the
 * contract, a message for people (never a secret), extra response headers and
 * optional details. Guards return or throw one; an envelope turns it into a
 * body (see envelope.ts). Like Hono's HTTPException: one type for every refusal.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    opts: { status?: number; headers?: Record<string, string>; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = opts.status ?? HTTP_STATUS[code] ?? 400;
    this.headers = opts.headers ?? {};
    this.details = opts.details;
  }

  /** The same refusal with more response headers (e.g. RateLimit-* on a 429). */
  withHeaders(headers: Record<string, string>): HttpError {
    return new HttpError(this.code, this.message, {
      status: this.status,
      headers: { ...this.headers, ...headers },
      ...(this.details ? { details: { ...this.details } } : {}),
    });
  }
}

export const httpError = (
  code: ErrorCode,
  message: string,
  opts?: ConstructorParameters<typeof HttpError>[2],
): HttpError => new HttpError(code, message, opts);

export const isHttpError = (v: unknown): v is HttpError => v instanceof HttpError;
