import { z } from 'zod';
import { AiTag } from './ai.ts';
import { CloudProduct, FeatureKey } from './catalog.ts';
import { Metric, Period, QueryTime, Scope } from './usage.ts';
import { Environment, SiteInfo } from './sites.ts';
import { lazySchema } from '../lazy-schema.ts';

/**
 * What an agency or an enterprise sees across its sites (`agency/*`) and
 * controls for all of them (`enterprise/*`). These endpoints take the
 * account's API key (`Authorization: Bearer gha_...`, made with
 * `gatehouse-cloud accounts keys create`), never a site signature: a site
 * reaches only its own data. Every answer names the account with its plan
 * and support priority.
 */

/** `gha_` + 43 base64url characters (32 random bytes); stored hashed, shown once. */
export const ACCOUNT_KEY_PATTERN = /^gha_[A-Za-z0-9_-]{43}$/;

/** Answers to a site or an account also carry these two headers (plan and support-priority identification). */
export const HEADER_PLAN = 'gatehouse-plan';
export const HEADER_SUPPORT_PRIORITY = 'gatehouse-support-priority';
export const SupportPriority = lazySchema(() =>
  z.string().regex(/^p[0-9]$/, 'a support priority: p0 to p9 (p1 first)'),
);

export const ACCOUNT_ENDPOINTS = {
  agencySites: { method: 'GET', path: 'agency/sites' },
  agencyUsage: { method: 'GET', path: 'agency/usage' },
  agencyEntitlements: { method: 'GET', path: 'agency/entitlements' },
  agencyReports: { method: 'GET', path: 'agency/reports' },
  agencyReportCreate: { method: 'POST', path: 'agency/reports' },
  agencyReport: { method: 'GET', path: 'agency/reports/:id' },
  agencyReportCsv: { method: 'GET', path: 'agency/reports/:id/csv' },
  enterprisePolicy: { method: 'GET', path: 'enterprise/policy' },
  enterprisePolicySet: { method: 'POST', path: 'enterprise/policy' },
  enterpriseLimitsSet: { method: 'POST', path: 'enterprise/limits' },
  enterpriseLogs: { method: 'GET', path: 'enterprise/logs' },
} as const satisfies Record<string, { method: 'GET' | 'POST'; path: string }>;
export type AccountEndpoint = keyof typeof ACCOUNT_ENDPOINTS;

export const AccountInfo = lazySchema(() =>
  z.object({
    id: z.string(),
    name: z.string(),
    /** the highest-ranked plan among the account's active licenses */
    plan: z.string().nullable(),
    support_priority: z.string().nullable(),
  }),
);
export type AccountInfo = z.infer<typeof AccountInfo>;

const iso = QueryTime;
const limit = (max: number, def: number) => z.coerce.number().int().min(1).max(max).default(def);
const siteId = lazySchema(() =>
  z
    .string()
    .max(64)
    .regex(/^[A-Za-z0-9_.:-]+$/, 'a site id'),
);

// ---- agency/sites
export const AgencySitesQuery = lazySchema(() =>
  z.object({
    status: z.enum(['active', 'disconnected']).optional(),
    environment: Environment.optional(),
    limit: limit(500, 100),
    cursor: z.string().max(200).optional(),
  }),
);
/** A site as its account sees it: sites/status's view plus the department and project it is assigned to. */
export const AgencySite = lazySchema(() =>
  SiteInfo.omit({ account_id: true, support_priority: true }).extend({
    department: z.string().nullable(),
    project: z.string().nullable(),
  }),
);
export type AgencySite = z.infer<typeof AgencySite>;

// ---- agency/usage: roll-ups per site, product, metric and period
export const AgencyUsageQuery = lazySchema(() =>
  z.object({
    period: Period.default('month'),
    /** default: the start of the current period */
    from: iso.optional(),
    /** default: the end of the current period */
    to: iso.optional(),
    site: siteId.optional(),
    product: CloudProduct.optional(),
    metric: Metric.optional(),
    limit: limit(5000, 1000),
    cursor: z.string().max(200).optional(),
  }),
);
export const UsageRollup = lazySchema(() =>
  z.object({
    site_id: z.string(),
    product: z.string(),
    metric: Metric,
    period_start: z.string(),
    amount: z.number().int(),
    events: z.number().int(),
  }),
);
export type UsageRollup = z.infer<typeof UsageRollup>;

// ---- agency/entitlements: the matrix site x feature
export const AgencyEntitlementsQuery = lazySchema(() =>
  z.object({ limit: limit(1000, 500), cursor: z.string().max(200).optional() }),
);

// ---- agency/reports: generated as a cloud task
export const ReportKind = lazySchema(() => z.enum(['usage']));
export const ReportCreateBody = lazySchema(() =>
  z.strictObject({
    kind: ReportKind.default('usage'),
    period: Period.default('month'),
    from: iso.optional(),
    to: iso.optional(),
  }),
);
export type ReportCreateBody = z.infer<typeof ReportCreateBody>;
export const TaskStatus = lazySchema(() => z.enum(['queued', 'running', 'done', 'failed']));
export const ReportTask = lazySchema(() =>
  z.object({
    id: z.string(),
    kind: ReportKind,
    status: TaskStatus,
    params: z.object({ period: Period, from: z.string(), to: z.string() }),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    /** the task and its result are kept until then */
    expires_at: z.string(),
    error: z.string().nullable(),
    /** rows of the report, once done */
    rows: z.number().int().nullable(),
  }),
);
export type ReportTask = z.infer<typeof ReportTask>;
export const ReportSiteRow = lazySchema(() =>
  z.object({
    site_id: z.string(),
    name: z.string().nullable(),
    url: z.string(),
    environment: Environment,
    status: z.string(),
    plan: z.string().nullable(),
    license_status: z.string(),
    version: z.string().nullable(),
    last_sync_at: z.string().nullable(),
    totals: z.record(z.string(), z.number().int()),
  }),
);
export const UsageReport = lazySchema(() =>
  z.object({
    account: AccountInfo,
    period: Period,
    from: z.string(),
    to: z.string(),
    generated_at: z.string(),
    sites: z.array(ReportSiteRow),
    rows: z.array(UsageRollup),
    totals: z.record(z.string(), z.number().int()),
  }),
);
export type UsageReport = z.infer<typeof UsageReport>;

// ---- enterprise/policy
export const AiPolicyView = lazySchema(() =>
  z.object({
    allowed_providers: z.array(z.string()).nullable(),
    required_tags: z.array(z.string()),
    fallback_order: z.array(z.string()),
  }),
);
export const PolicyLimit = lazySchema(() =>
  z.object({
    scope: Scope,
    subject: z.string(),
    metric: Metric,
    period: Period,
    limit: z.number().int(),
    set_by: z.enum(['operator', 'account']),
  }),
);
export const PolicyAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    account: AccountInfo,
    policy: z.object({
      ai: AiPolicyView,
      /** features switched off for every site of the account */
      features_off: z.array(z.string()),
      /** limits on the account's scopes (account, its departments, projects and sites) */
      limits: z.array(PolicyLimit),
      /** what the gateway's operator set: the account's own policy can only narrow it (`ai` and `features_off` above are the two together) */
      operator: z.object({ ai: AiPolicyView, features_off: z.array(z.string()) }).optional(),
    }),
  }),
);

const providerId = lazySchema(() => z.string().regex(/^[a-z0-9][a-z0-9_-]{0,47}$/, 'a provider id'));
export const PolicySetBody = lazySchema(() =>
  z.strictObject({
    ai: z
      .strictObject({
        allowed_providers: z.array(providerId).max(100).nullable().optional(),
        required_tags: z.array(AiTag).max(16).optional(),
        fallback_order: z.array(providerId).max(100).optional(),
      })
      .optional(),
    features_off: z.array(FeatureKey).max(100).optional(),
  }),
);
export type PolicySetBody = z.infer<typeof PolicySetBody>;

/** POST enterprise/limits: one limit on one of the account's scopes; `limit: null` removes it. Account limits add to the plan's, never replace them. */
export const LimitSetBody = lazySchema(() =>
  z.strictObject({
    scope: Scope,
    /** site: a site id of the account; department / project: the label; account: omitted */
    subject: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9 _.:-]+$/, 'letters, digits, space, _ . : -')
      .optional(),
    metric: Metric,
    period: Period,
    limit: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable(),
  }),
);
export type LimitSetBody = z.infer<typeof LimitSetBody>;

// ---- enterprise/logs: the request log, JSONL or CSV
export const LOG_EXPORT_MAX_ROWS = 100_000;
export const LogsQuery = lazySchema(() =>
  z.object({
    format: z.enum(['jsonl', 'csv']).default('jsonl'),
    site: siteId.optional(),
    endpoint: z
      .string()
      .max(100)
      .regex(/^[a-z0-9/:_-]+$/, 'an endpoint path like ai/generate')
      .optional(),
    /** an HTTP status (429) or a class (4xx) */
    status: z
      .string()
      .regex(/^([1-5][0-9]{2}|[1-5]xx)$/, 'a status like 429 or a class like 4xx')
      .optional(),
    from: iso.optional(),
    to: iso.optional(),
    limit: limit(LOG_EXPORT_MAX_ROWS, 10_000),
    cursor: z.string().max(200).optional(),
  }),
);
/** One request as the log keeps it: no body, no query, no header, no secret. */
export const LOG_COLUMNS = [
  'at',
  'request_id',
  'site_id',
  'auth',
  'endpoint',
  'method',
  'status',
  'code',
  'ms',
] as const;
/** When an export stops at `limit`, the next page's cursor is in this header. */
export const HEADER_NEXT_CURSOR = 'gatehouse-next-cursor';
