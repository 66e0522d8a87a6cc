import { z } from 'zod';
import { lazySchema } from '../lazy-schema.ts';

/**
 * The cloud gateway's error codes (docs/cloud-gateway.md "Conventions"):
 * the gateway's twelve (docs/cloud-gateway.md, "Conventions") plus the generic request errors every HTTP service has.
 * The client maps each to a typed error; nothing matches on message text.
 */
export const CloudErrorCode = lazySchema(() =>
  z.enum([
    'gateway_unavailable',
    'invalid_site',
    'license_invalid',
    'license_expired',
    'entitlement_required',
    'quota_exceeded',
    'signature_invalid',
    'token_expired',
    'product_inactive',
    'provider_unavailable',
    'update_not_allowed',
    'rate_limited',
    // license/activate on a license whose production sites are all taken
    'site_limit_reached',
    // account endpoints (agency/*, enterprise/*): no valid account API key
    'unauthorized',
    // the credential is valid but may not do this (a site signature on an account view, a route the account's policy excludes)
    'forbidden',
    // request errors
    'invalid_request',
    'parse_error',
    'payload_too_large',
    'not_found',
    'conflict',
    'internal_error',
  ]),
);
export type CloudErrorCode = z.infer<typeof CloudErrorCode>;

export interface CloudErrorRule {
  /** the HTTP status of the answer */
  status: number;
  /** whether the client's retry policy retries it */
  retryable: boolean;
}

/**
 * HTTP status and retry rule per code. `invalid_site` is 401 for an unknown
 * key id and 403 for a disconnected site: the table holds the 401, the
 * disconnected case passes its status explicitly.
 */
export const CLOUD_ERRORS: Record<CloudErrorCode, CloudErrorRule> = {
  gateway_unavailable: { status: 503, retryable: true },
  invalid_site: { status: 401, retryable: false },
  license_invalid: { status: 403, retryable: false },
  license_expired: { status: 403, retryable: false },
  entitlement_required: { status: 403, retryable: false },
  quota_exceeded: { status: 429, retryable: false },
  signature_invalid: { status: 401, retryable: false },
  // retried once, after the client re-syncs its clock offset from server_time
  token_expired: { status: 401, retryable: true },
  product_inactive: { status: 403, retryable: false },
  provider_unavailable: { status: 503, retryable: true },
  update_not_allowed: { status: 403, retryable: false },
  rate_limited: { status: 429, retryable: true },
  site_limit_reached: { status: 409, retryable: false },
  unauthorized: { status: 401, retryable: false },
  forbidden: { status: 403, retryable: false },
  invalid_request: { status: 400, retryable: false },
  parse_error: { status: 400, retryable: false },
  payload_too_large: { status: 413, retryable: false },
  not_found: { status: 404, retryable: false },
  conflict: { status: 409, retryable: false },
  internal_error: { status: 500, retryable: true },
};

/** `invalid_site` for a site that was disconnected (its key id is known but no longer works). */
export const INVALID_SITE_DISCONNECTED_STATUS = 403;

/** `{success: false, error: {code, message, request_id, retryable, required_plan?, ...details}}` */
export const CloudErrorBody = lazySchema(() =>
  z.looseObject({
    code: CloudErrorCode,
    message: z.string(),
    request_id: z.string(),
    retryable: z.boolean(),
    required_plan: z.string().nullable().optional(),
  }),
);
export type CloudErrorBody = z.infer<typeof CloudErrorBody>;

export const CloudErrorEnvelope = lazySchema(() => z.object({ success: z.literal(false), error: CloudErrorBody }));
export type CloudErrorEnvelope = z.infer<typeof CloudErrorEnvelope>;

/** Details of a `quota_exceeded` error (and of a usage event rejected for quota). */
export const QuotaDetails = lazySchema(() =>
  z.object({
    scope: z.enum(['account', 'department', 'site', 'project']),
    subject: z.string(),
    metric: z.string(),
    period: z.enum(['day', 'month']),
    limit: z.number().int(),
    used: z.number().int(),
    reset_at: z.string(),
  }),
);
export type QuotaDetails = z.infer<typeof QuotaDetails>;
