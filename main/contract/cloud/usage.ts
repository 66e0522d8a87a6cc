import { z } from 'zod';
import { CloudProduct } from './catalog.ts';
import { QuotaDetails } from './errors.ts';
import { lazySchema } from '../lazy-schema.ts';

/** What quotas count, per scope and period. */
export const Metric = lazySchema(() =>
  z.enum(['ai_tokens', 'translation_characters', 'indexing_requests', 'mcp_actions', 'reports', 'cloud_tasks']),
);
export type Metric = z.infer<typeof Metric>;
export const Scope = lazySchema(() => z.enum(['account', 'department', 'site', 'project']));
export type Scope = z.infer<typeof Scope>;
export const Period = lazySchema(() => z.enum(['day', 'month']));
export type Period = z.infer<typeof Period>;

/**
 * How an event counts: its `units` go to the metric named by the event's
 * first segment (`mcp.tool.called` -> mcp_actions), and its
 * `tokens_input + tokens_output` go to ai_tokens whatever its name. Events
 * of other names are kept and listed but count against no limit.
 */
export const UNITS_METRIC_BY_EVENT_PREFIX: Readonly<Record<string, Metric>> = {
  mcp: 'mcp_actions',
  translation: 'translation_characters',
  indexing: 'indexing_requests',
  report: 'reports',
  task: 'cloud_tasks',
};

export function unitsMetricOf(event: string): Metric | null {
  const prefix = event.slice(0, event.indexOf('.'));
  return Object.hasOwn(UNITS_METRIC_BY_EVENT_PREFIX, prefix) ? UNITS_METRIC_BY_EVENT_PREFIX[prefix]! : null;
}

/** At most this many events per usage/record call. */
export const USAGE_BATCH_MAX = 100;
const MAX_UNITS = 1_000_000_000;

const text = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[\x20-\x7e]*$/, 'printable ASCII');

/** The times a query or a report may name: from 1970 to the end of 9998, so a period around one (and its end) is a date the database holds. */
export const TIME_RANGE = { min: Date.UTC(1970, 0, 1), max: Date.UTC(9999, 0, 1) } as const;
/** An ISO 8601 time with its offset, inside TIME_RANGE (year 0 and 10000 were 500s; years 1 to 99 were read as 19xx). */
export const QueryTime = lazySchema(() =>
  z.iso.datetime({ offset: true }).refine((v) => {
    const t = Date.parse(v);
    return t >= TIME_RANGE.min && t < TIME_RANGE.max;
  }, 'a time from 1970-01-01 to 9998-12-31'),
);

/** A usage event (docs/cloud-gateway.md, "Endpoints") plus a client-made `event_id` (UUIDv7), as `usage/record` takes it. */
export const CloudUsageEvent = lazySchema(() =>
  z.strictObject({
    event_id: z
      .string()
      .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a lower-case UUIDv7'),
    event: z
      .string()
      .max(100)
      .regex(/^[a-z0-9_]+(\.[a-z0-9_]+)+$/, 'a dotted event name'),
    site_id: z.string().max(64),
    product: CloudProduct,
    feature: text(100),
    model: text(100).default(''),
    units: z.number().int().nonnegative().max(MAX_UNITS),
    tokens_input: z.number().int().nonnegative().max(MAX_UNITS).default(0),
    tokens_output: z.number().int().nonnegative().max(MAX_UNITS).default(0),
    timestamp: z.iso.datetime({ offset: true }),
  }),
);
export type CloudUsageEvent = z.infer<typeof CloudUsageEvent>;

/**
 * Body of usage/record: one event object, or `{events: [...]}` with 1 to 100
 * events. The events are checked one by one, so one malformed event is
 * rejected with a reason while the rest are recorded.
 */
export const UsageBatchBody = lazySchema(() =>
  z.strictObject({ events: z.array(z.unknown()).min(1).max(USAGE_BATCH_MAX) }),
);

export const UsageRejectReason = lazySchema(() =>
  z.enum(['invalid_event', 'site_mismatch', 'timestamp_out_of_range', 'quota_exceeded']),
);
export type UsageRejectReason = z.infer<typeof UsageRejectReason>;

export const UsageRecordResult = lazySchema(() =>
  z.object({
    /** null when the event had no readable event_id */
    event_id: z.string().nullable(),
    status: z.enum(['accepted', 'duplicate', 'rejected']),
    reason: UsageRejectReason.optional(),
    /** what to fix, for a rejected event */
    message: z.string().optional(),
    /** for reason quota_exceeded */
    quota: QuotaDetails.optional(),
  }),
);
export type UsageRecordResult = z.infer<typeof UsageRecordResult>;

export const UsageRecordAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    results: z.array(UsageRecordResult),
    accepted: z.number().int(),
    duplicate: z.number().int(),
    rejected: z.number().int(),
  }),
);
export type UsageRecordAnswer = z.infer<typeof UsageRecordAnswer>;

/** One limit that applies to the site, with its current use. */
export const LimitState = lazySchema(() =>
  z.object({
    scope: Scope,
    subject: z.string(),
    metric: Metric,
    period: Period,
    limit: z.number().int(),
    used: z.number().int(),
    /** held by reservations not yet settled (AI tokens) */
    reserved: z.number().int(),
    remaining: z.number().int(),
    period_start: z.string(),
    reset_at: z.string(),
    /** `plan` when it comes from the license's plan, `operator` when set with `limits set`, `account` when the account set it (enterprise/limits) */
    source: z.enum(['plan', 'operator', 'account']),
  }),
);
export type LimitState = z.infer<typeof LimitState>;

export const UsageLimitsAnswer = lazySchema(() => z.object({ success: z.literal(true), limits: z.array(LimitState) }));

export const UsageSummaryQuery = lazySchema(() =>
  z.object({
    period: Period.default('month'),
    /** any time inside the period asked for; default now */
    at: QueryTime.optional(),
  }),
);
export const UsageSummaryAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    site_id: z.string(),
    period: Period,
    period_start: z.string(),
    reset_at: z.string(),
    events: z.number().int(),
    /** the site's total per metric in the period */
    totals: z.record(z.string(), z.number().int()),
    by_product: z.record(z.string(), z.record(z.string(), z.number().int())),
    limits: z.array(LimitState),
  }),
);
export type UsageSummaryAnswer = z.infer<typeof UsageSummaryAnswer>;

export const USAGE_HISTORY_MAX_PAGE = 500;
export const UsageHistoryQuery = lazySchema(() =>
  z.object({
    period: Period.default('day'),
    metric: Metric.optional(),
    feature: z.string().max(100).optional(),
    product: CloudProduct.optional(),
    from: QueryTime.optional(),
    to: QueryTime.optional(),
    limit: z.coerce.number().int().min(1).max(USAGE_HISTORY_MAX_PAGE).default(100),
    cursor: z.string().max(200).optional(),
  }),
);
export const UsageHistoryItem = lazySchema(() =>
  z.object({
    period_start: z.string(),
    metric: Metric,
    product: z.string(),
    feature: z.string(),
    amount: z.number().int(),
    events: z.number().int(),
  }),
);
export const UsageHistoryAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    period: Period,
    items: z.array(UsageHistoryItem),
    next_cursor: z.string().nullable(),
  }),
);
export type UsageHistoryAnswer = z.infer<typeof UsageHistoryAnswer>;
