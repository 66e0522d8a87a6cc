import type { ErrorCode } from '../contract/errors.ts';
import { errorCode, isDiskRefusal } from '../lib/os-error.ts';

/** The one typed error family. Messages are for people and never carry a secret. */
export class GatehouseError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'GatehouseError';
  }
}

export const isGatehouseError = (e: unknown): e is GatehouseError => e instanceof GatehouseError;

/**
 * The disk refusing a write (ENOSPC, EDQUOT, EIO, EROFS), wherever it was written (a staged write's file, a
 * lock, the audit): `storage_unavailable`, never an internal error. Its OS code only: the message may name a path.
 */
export function diskRefusal(e: unknown): GatehouseError | null {
  if (isGatehouseError(e) || !isDiskRefusal(e)) return null;
  return new GatehouseError(
    'storage_unavailable',
    `a file could not be saved: the disk refused it (${errorCode(e)}); free space on the disk that holds the data dir, then try again`,
    { error: errorCode(e) },
  );
}

/** The code anything thrown is answered and audited with. */
export function codeOf(e: unknown): ErrorCode {
  return isGatehouseError(e) ? e.code : isDiskRefusal(e) ? 'storage_unavailable' : 'internal_error';
}

/** Turn anything thrown into `{code, message}` without leaking internals. */
export function toErrorShape(e: unknown): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
  const own = isGatehouseError(e) ? e : diskRefusal(e);
  if (own)
    return {
      code: own.code,
      message: own.message,
      ...(Object.keys(own.details).length ? { details: own.details } : {}),
    };
  return { code: 'internal_error', message: 'internal error: see the service log' };
}
