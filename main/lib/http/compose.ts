import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './http-error.ts';
import { sendError } from './send.ts';
import { errorCode, isDiskRefusal } from '../os-error.ts';
import type { Envelope, ErrorMeta } from './envelope.ts';

/** A guard's way of saying it answered the request itself (a preflight, a redirect). */
export const ANSWERED = Symbol('answered');

/** Nothing (pass on), a refusal, or ANSWERED. A guard may also throw an HttpError. */
export type GuardResult = HttpError | typeof ANSWERED | null | undefined | void;
export type Guard<C> = (c: C) => GuardResult | Promise<GuardResult>;

/**
 * One small function per concern, run in order over one context: the first
 * refusal (returned or thrown HttpError) or ANSWERED stops the chain and is
 * returned; null means every guard passed. Not an onion like Hono's/Koa's:
 * our guards only decide whether a request goes on, and a straight loop that
 * awaits only real promises keeps the MCP endpoint's hot path cheap.
 * Errors that are not HttpError propagate: they are bugs, answered as 500.
 */
export function compose<C>(...guards: Guard<C>[]): (c: C) => Promise<HttpError | typeof ANSWERED | null> {
  return async (c) => {
    try {
      for (const guard of guards) {
        let r = guard(c);
        if (r instanceof Promise) r = await r;
        if (r) return r;
      }
      return null;
    } catch (e) {
      if (e instanceof HttpError) return e;
      throw e;
    }
  };
}

export interface ErrorBoundaryOptions {
  envelope: Envelope;
  log: { error(msg: string, fields?: Record<string, unknown>): void };
  /** the request id set on the answer (X-Request-Id); read after the handler ran */
  meta: (req: IncomingMessage, res: ServerResponse) => ErrorMeta;
  /**
   * A server's own error types as refusals, before the default rule (an
   * HttpError as it is, anything else a bug): an HttpError to answer,
   * ANSWERED when nothing is left to send (the client went away), null for
   * the default.
   */
  translate?: (e: unknown) => HttpError | typeof ANSWERED | null;
}

/**
 * The outermost wrapper of a server's handler: an HttpError that escapes is
 * answered in the envelope; anything else is a bug in us, logged (no request
 * body, no headers) and answered 500 internal_error without details.
 */
export function errorBoundary(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void,
  opts: ErrorBoundaryOptions,
) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      await handler(req, res);
    } catch (e) {
      const own = opts.translate?.(e) ?? (e instanceof HttpError ? e : null);
      if (own === ANSWERED) return;
      if (own) return sendError(res, own, opts.envelope, opts.meta(req, res));
      // The disk refusing a write is no bug of ours: said as such (core/errors.ts answers the same for actions).
      if (isDiskRefusal(e))
        return sendError(
          res,
          new HttpError(
            'storage_unavailable',
            `a file could not be saved: the disk refused it (${errorCode(e)}); free space on the disk that holds the data dir, then try again`,
          ),
          opts.envelope,
          opts.meta(req, res),
        );
      opts.log.error('request failed', {
        error: e instanceof Error ? e.message : String(e),
        method: req.method,
        path: (req.url ?? '').split('?')[0]!.slice(0, 200),
      });
      sendError(
        res,
        new HttpError('internal_error', 'internal error: see the service log'),
        opts.envelope,
        opts.meta(req, res),
      );
    }
  };
}

/** The request id the answer carries, for envelopes built outside the handler. */
export const answerMeta = (_req: IncomingMessage, res: ServerResponse): ErrorMeta => ({
  requestId: String(res.getHeader('x-request-id') ?? ''),
});
