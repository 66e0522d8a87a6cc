import { z } from 'zod';
import { CloudClientStatus, OutboxView } from './cloud-status.ts';
import { Environment } from './cloud/sites.ts';
import { LicenseKey, LicenseView } from './cloud/license.ts';
import { LimitState, Metric, Period, Scope, UsageHistoryItem, UsageSummaryAnswer } from './cloud/usage.ts';
import { ReleaseChannel } from './cloud/updates.ts';
import { UsageTotals } from './audit.ts';
import { nameText } from './cloud/names.ts';
import { lazySchema } from './lazy-schema.ts';

/**
 * Inputs and answers of the console's cloud actions (`cloud.*`,
 * `updates.*` in API_ACTIONS): the Cloud screen, the Usage screen's quotas
 * and chart, the tray, and `gatehouse cloud ...`. Every one is for a person
 * (console, tray, CLI with the admin key); the service verifies that before
 * it makes any cloud request. Never a secret: the license key goes in and
 * never comes back out (only its preview), the site secret never leaves the
 * vault.
 */

const line = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    // eslint-disable-next-line no-control-regex -- refusing control characters is the point
    .regex(/^[^\x00-\x1f\x7f]*$/, 'no control characters');

/** A part of an answer that failed, as data (the first sync of a connect, the remote half of a disconnect, a usage fetch). */
export const CloudFailure = lazySchema(() =>
  z.object({
    /** a gateway code (the spec's twelve, or a request error) or one of ours */
    code: z.string(),
    message: z.string(),
    /** the X-Request-Id the client sent, to find the request in the gateway's logs; null when nothing was sent */
    request_id: z.string().nullable(),
  }),
);
export type CloudFailure = z.infer<typeof CloudFailure>;

// ---- cloud.connect

export const CloudConnectInput = lazySchema(() =>
  z.strictObject({
    /** the gateway's base address, with or without /gateway/v1; https, or http to this machine only */
    url: line(2048),
    environment: Environment.default('production'),
    /** the gateway key to pin: the JWK as JSON, its bare `x`, or `kid:x` (as `gatehouse-cloud keys show` prints); default the first key of GET keys */
    public_key: line(4096).optional(),
    /** a name for this site in the gateway's lists */
    name: z.string().trim().pipe(nameText(200)).optional(),
  }),
);
export type CloudConnectInput = z.input<typeof CloudConnectInput>;

export const CloudConnectAnswer = lazySchema(() =>
  z.object({
    site_id: z.string(),
    environment: Environment,
    gateway_url: z.string(),
    /** the key now pinned: compare the fingerprint with the one the gateway's operator gives */
    pinned_key: z.object({
      kid: z.string().nullable(),
      fingerprint: z.string(),
      source: z.enum(['explicit', 'fetched']),
    }),
    /** the first sync right after registering; the connection stands even when it failed */
    first_sync: z.discriminatedUnion('ok', [
      z.object({ ok: z.literal(true) }),
      CloudFailure.extend({ ok: z.literal(false) }),
    ]),
  }),
);
export type CloudConnectAnswer = z.infer<typeof CloudConnectAnswer>;

// ---- cloud.activate / cloud.deactivate

/** The key is checked for its form only (`ghl_` + 32 characters); an error never repeats it. */
export const CloudActivateInput = lazySchema(() => z.strictObject({ license_key: z.string().trim().pipe(LicenseKey) }));
export type CloudActivateInput = z.input<typeof CloudActivateInput>;

export const CloudLicenseAnswer = lazySchema(() =>
  z.object({
    /** the license as the gateway sees it now: status, plan, key preview (never the key), expiry, seats */
    license: LicenseView,
    request_id: z.string(),
  }),
);
export type CloudLicenseAnswer = z.infer<typeof CloudLicenseAnswer>;

// ---- cloud.sync

export const CloudSyncAnswer = lazySchema(() =>
  z.object({
    /** the usage outbox's upload before the sync: what went, what is left, and why it stopped if it did */
    outbox: z.object({
      ok: z.boolean(),
      sent: z.number().int(),
      remaining: z.number().int(),
      error: CloudFailure.nullable(),
    }),
    /** whether the fresh certificate verified against the pinned key */
    certificate: z.enum(['accepted', 'refused']),
    request_id: z.string(),
  }),
);
export type CloudSyncAnswer = z.infer<typeof CloudSyncAnswer>;

// ---- cloud.disconnect

export const CloudDisconnectAnswer = lazySchema(() =>
  z.object({
    /** null when nothing was connected */
    site_id: z.string().nullable(),
    /** whether the gateway was told; when not, the site key stays valid there until its operator disconnects it */
    remote: z.discriminatedUnion('ok', [
      z.object({ ok: z.literal(true) }),
      CloudFailure.extend({ ok: z.literal(false) }),
    ]),
    /** usage events that could not be uploaded before the identity was dropped (counted, never silently) */
    unsent_events: z.number().int(),
  }),
);
export type CloudDisconnectAnswer = z.infer<typeof CloudDisconnectAnswer>;

// ---- quotas (cloud.status, cloud.usage, the tray, health warnings)

/**
 * A quota that is used up or nearly so, for the console's warning and the
 * tray: from the gateway's usage/limits (`limits`), or from a refusal the
 * service saw (`refusal`: an AI call or a usage event answered
 * quota_exceeded). Shown until `reset_at`.
 */
export const QuotaAlert = lazySchema(() =>
  z.object({
    level: z.enum(['near', 'exceeded']),
    scope: Scope,
    subject: z.string().nullable(),
    metric: Metric,
    period: Period.nullable(),
    limit: z.number().int(),
    used: z.number().int(),
    reset_at: z.string(),
    source: z.enum(['limits', 'refusal']),
    /** when the service learned it */
    seen_at: z.string(),
  }),
);
export type QuotaAlert = z.infer<typeof QuotaAlert>;

/** A limit counts as "near" from this share of it used. */
export const QUOTA_NEAR_SHARE = 0.8;

// ---- cloud.status

export const CloudStatusView = lazySchema(() =>
  CloudClientStatus.extend({
    quota_alerts: z.array(QuotaAlert),
  }),
);
export type CloudStatusView = z.infer<typeof CloudStatusView>;

// ---- cloud.usage

export const CloudUsageInput = lazySchema(() =>
  z.strictObject({
    /** the summary's period */
    period: Period.default('month'),
    /** how many days of daily history for the chart (today included) */
    days: z.coerce.number().int().min(1).max(90).default(30),
  }),
);
export type CloudUsageInput = z.input<typeof CloudUsageInput>;

export const CloudUsageView = lazySchema(() =>
  z.object({
    connected: z.boolean(),
    /**
     * `cloud`: fetched from the gateway now; `cached`: the gateway could not be
     * asked now (see `error`), these are the figures of `fetched_at`; `local`:
     * not connected, only the local counts below
     */
    source: z.enum(['cloud', 'cached', 'local']),
    fetched_at: z.string().nullable(),
    /** every limit that applies to this site with its use, from usage/limits: the quota bars */
    limits: z.array(LimitState),
    /** the site's totals in the current period, from usage/summary */
    summary: UsageSummaryAnswer.pick({
      period: true,
      period_start: true,
      reset_at: true,
      events: true,
      totals: true,
      by_product: true,
    }).nullable(),
    /** daily amounts per metric, product and feature from usage/history, oldest first: the chart */
    history: z.array(UsageHistoryItem),
    /** what this service counted itself (every event, connected or not), per event name and feature */
    local: z.object({ since: z.string().nullable(), usage: z.record(z.string(), z.record(z.string(), UsageTotals)) }),
    /** events waiting for upload, and what the gateway accepted or refused of them */
    outbox: OutboxView,
    quota_alerts: z.array(QuotaAlert),
    /** why the gateway's figures are missing or cached */
    error: CloudFailure.nullable(),
  }),
);
export type CloudUsageView = z.infer<typeof CloudUsageView>;

// ---- updates.status / updates.check

export const UpdatesCheckInput = lazySchema(() =>
  z.strictObject({
    /** ask about another channel than the license's (the gateway says whether this site may use it) */
    channel: ReleaseChannel.optional(),
  }),
);
export type UpdatesCheckInput = z.input<typeof UpdatesCheckInput>;

export const UpdatesView = lazySchema(() =>
  z.object({
    connected: z.boolean(),
    current_version: z.string(),
    /** the channel asked about: the one given, else the license's (from the certificate) */
    channel: z.string().nullable(),
    /** whether this site may have updates on that channel (null: not known yet) */
    eligible: z.boolean().nullable(),
    checked_at: z.string().nullable(),
    /** the newest release the gateway offered, and only once its signed manifest verified against the pinned key */
    latest_version: z.string().nullable(),
    update_available: z.boolean(),
    release: z
      .object({
        version: z.string(),
        channel: z.string(),
        released_at: z.string(),
        notes: z.string().nullable(),
        files: z.array(z.object({ name: z.string(), platform: z.string(), arch: z.string(), size: z.number().int() })),
      })
      .nullable(),
    /** why no update is offered when the gateway had one (e.g. the manifest did not verify), or null */
    refused: z.string().nullable(),
    error: CloudFailure.nullable(),
  }),
);
export type UpdatesView = z.infer<typeof UpdatesView>;
