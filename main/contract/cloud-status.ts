import { z } from 'zod';
import { CloudHealth, Warning } from './health.ts';
import { Environment } from './cloud/sites.ts';
import { lazySchema } from './lazy-schema.ts';

/**
 * What the app's cloud client says about itself (main/cloud-client): the
 * health report (`health`) plus what the console, the tray, `gatehouse cloud
 * status` and `pro/cloud/status` need to show a person why something stopped.
 * Never a secret: no site secret, no license key (only its preview).
 */

/** Why the last logical request ended the way it did. */
export const StopReason = lazySchema(() =>
  z.enum([
    'succeeded',
    /** an answer the policy never retries (4xx, quota_exceeded, a bad answer) */
    'not_retryable',
    /** every attempt failed with something retryable */
    'attempts_exhausted',
    /** the gateway asked to wait longer than the policy allows (30 s interactive, 60 s background) */
    'retry_after_too_long',
    /** the circuit breaker was open: no request was sent */
    'breaker_open',
    'aborted',
  ]),
);
export type StopReason = z.infer<typeof StopReason>;

export const CloudErrorRecord = lazySchema(() =>
  z.object({
    at: z.string(),
    /** the endpoint, e.g. `usage/record` */
    operation: z.string(),
    code: z.string(),
    message: z.string(),
    /** the X-Request-Id sent (the same on every attempt), to correlate with the gateway's logs */
    request_id: z.string(),
    attempts: z.number().int(),
    stopped: StopReason,
    http_status: z.number().int().nullable(),
  }),
);
export type CloudErrorRecord = z.infer<typeof CloudErrorRecord>;

export const BreakerView = lazySchema(() =>
  z.object({
    state: z.enum(['closed', 'open', 'half_open']),
    /** when the next request may go (open) */
    open_until: z.string().nullable(),
    /** how long the breaker opens next time it trips, or opened last time */
    open_ms: z.number().int(),
    trips: z.number().int(),
  }),
);
export type BreakerView = z.infer<typeof BreakerView>;

export const OutboxView = lazySchema(() =>
  z.object({
    /** events waiting to be uploaded */
    depth: z.number().int(),
    capacity: z.number().int(),
    full: z.boolean(),
    /** events not queued because the outbox was full (each one logged) */
    refused_full: z.number().int(),
    oldest_at: z.string().nullable(),
    /** events the gateway has (accepted now, or already had: duplicate), each counted once */
    delivered: z.number().int(),
    accepted: z.number().int(),
    duplicate: z.number().int(),
    /** events the gateway refused for good, with the reason kept in `recent_rejections` */
    rejected: z.number().int(),
    /** events of a site identity that was disconnected before they were uploaded */
    abandoned: z.number().int(),
    /** events made while no site was connected: counted locally only */
    unconnected: z.number().int(),
    /** events not queued because they are not valid cloud usage events (or could not be written) */
    invalid: z.number().int(),
    /** AI generations: the gateway records them itself when it serves them, so they are not queued */
    cloud_recorded: z.number().int(),
    recent_rejections: z.array(z.object({ event_id: z.string().nullable(), reason: z.string(), message: z.string() })),
    last_upload_at: z.string().nullable(),
    uploading: z.boolean(),
    /** events the outbox file could not take (a full or failing disk): held in memory, uploaded and written down once it can */
    unsaved: z.number().int(),
    /** the outbox file's last write error while it refuses writes, else null */
    write_error: z.string().nullable(),
  }),
);
export type OutboxView = z.infer<typeof OutboxView>;

export const CertificateView = lazySchema(() =>
  z.object({
    kid: z.string(),
    issued_at: z.string(),
    cert_expires_at: z.string(),
    /** when grants stop: the earlier of cert_expires_at and 7 days after issued_at */
    grants_until: z.string(),
    /** usable: the feature gates follow it */
    usable: z.boolean(),
    /** why it is not usable, or why it warns */
    reason: z.enum(['ok', 'stale', 'expired', 'clock_set_back', 'license_not_active']),
    license: z.object({
      status: z.string(),
      plan: z.string().nullable(),
      key_preview: z.string().nullable(),
      expires_at: z.string().nullable(),
    }),
    update: z.object({ channel: z.string(), eligible: z.boolean() }),
    products: z.record(z.string(), z.string()),
  }),
);
export type CertificateView = z.infer<typeof CertificateView>;

export const PreviousSite = lazySchema(() =>
  z.object({
    site_id: z.string().nullable(),
    gateway_url: z.string(),
    disconnected_at: z.string(),
    delivered: z.number().int(),
    rejected: z.number().int(),
    /** events written off at the disconnect */
    abandoned: z.number().int(),
  }),
);
export type PreviousSite = z.infer<typeof PreviousSite>;

export const CloudClientStatus = lazySchema(() =>
  z.object({
    /** the health report (`GET {REST_PREFIX}/pro/cloud/status`, README.md) */
    health: CloudHealth,
    connected: z.boolean(),
    gateway_url: z.string().nullable(),
    environment: Environment.nullable(),
    site_id: z.string().nullable(),
    /** the pinned gateway key: its kid (when known) and SHA-256 fingerprint, for a person to compare */
    pinned_key: z.object({ kid: z.string().nullable(), fingerprint: z.string() }).nullable(),
    certificate: CertificateView.nullable(),
    /**
     * The license in one word: `none` (never activated on this site) and `deactivated` (let go here) both mean
     * the free plan applies, which is no fault; `invalid` is a license revoked or suspended by its vendor.
     */
    license_state: z.enum(['none', 'deactivated', 'active', 'expired', 'invalid', 'unknown']),
    products: z.record(z.string(), z.string()),
    last_sync: z.string().nullable(),
    last_refresh_attempt: z.string().nullable(),
    next_refresh_at: z.string().nullable(),
    outbox: OutboxView,
    breaker: BreakerView,
    clock: z.object({ offset_ms: z.number(), set_back: z.boolean() }),
    last_errors: z.array(CloudErrorRecord),
    warnings: z.array(Warning),
    /** the last site this service was connected as, kept as history after a disconnect (its counts are not the current site's) */
    previous_site: PreviousSite.nullable(),
  }),
);
export type CloudClientStatus = z.infer<typeof CloudClientStatus>;
