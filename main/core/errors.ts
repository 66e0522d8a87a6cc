import type { ErrorCode } from '../contract/errors.ts';

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

/** Turn anything thrown into `{code, message}` without leaking internals. */
export function toErrorShape(e: unknown): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
  if (isGatehouseError(e))
    return { code: e.code, message: e.message, ...(Object.keys(e.details).length ? { details: e.details } : {}) };
  return { code: 'internal_error', message: 'internal error: see the service log' };
}
