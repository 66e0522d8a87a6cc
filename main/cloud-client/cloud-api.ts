import { z } from 'zod';
import { AiGenerateAnswer, AiGenerateRequest, AiRouteAnswer } from '../contract/cloud/ai.ts';
import { Jwks } from '../contract/cloud/certificate.ts';
import {
  CheckAnswer,
  CheckBody,
  EntitlementsAnswer,
  FeaturesAnswer,
  ProductsAnswer,
} from '../contract/cloud/entitlements.ts';
import { ActivateBody, DeactivateAnswer, LicenseAnswer } from '../contract/cloud/license.ts';
import {
  AiModelsAnswer,
  AiProvidersAnswer,
  CLOUD_AI_UPDATES_ENDPOINTS,
  UpdatesCheckAnswer,
  UpdatesPackageAnswer,
  UpdatesQuery,
  UpdatesVerifyAnswer,
  UpdatesVerifyBody,
} from '../contract/cloud/ai-updates-answers.ts';
import { CLOUD_ENDPOINTS } from '../contract/cloud/paths.ts';
import {
  DisconnectAnswer,
  RegisterAnswer,
  RegisterBody,
  SiteStatusAnswer,
  SyncAnswer,
  SyncBody,
} from '../contract/cloud/sites.ts';
import {
  UsageHistoryAnswer,
  UsageHistoryQuery,
  UsageLimitsAnswer,
  UsageRecordAnswer,
  UsageSummaryAnswer,
  UsageSummaryQuery,
} from '../contract/cloud/usage.ts';
import { GatehouseError } from '../core/errors.ts';
import type { CallMode, CallResult, CloudHttp, Endpoint } from './cloud-http.ts';
import { lazySchema } from '../contract/lazy-schema.ts';

/**
 * A typed method for every `/gateway/v1/` endpoint a site uses. Requests are
 * checked with the contract's schemas before they leave (a bad argument is
 * the caller's invalid_value, not a round trip); answers are validated with
 * the contract's schemas by CloudHttp. Every method returns the answer with
 * the request id it was sent under.
 */
export interface Call {
  mode?: CallMode;
  signal?: AbortSignal;
}

const HealthAnswer = lazySchema(() =>
  z.looseObject({
    success: z.literal(true),
    status: z.string(),
    server_time: z.string().optional(),
  }),
);
/** ai/generate waits for a model: it gets a longer deadline than the other calls. */
export const AI_GENERATE_TIMEOUT_MS = 120_000;

function input<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new GatehouseError('invalid_value', `${what}: ${i.path.join('.') || 'value'}: ${i.message}`);
  }
  return r.data;
}

export class CloudApi {
  constructor(readonly http: CloudHttp) {}

  private get<T>(
    e: Endpoint,
    schema: z.ZodType<T>,
    c: Call = {},
    query?: Record<string, string | number | undefined>,
  ): Promise<CallResult<T>> {
    return this.http.call(e, { schema, query, mode: c.mode, signal: c.signal });
  }
  private post<T>(
    e: Endpoint,
    schema: z.ZodType<T>,
    body: unknown,
    c: Call = {},
    timeoutMs?: number,
  ): Promise<CallResult<T>> {
    return this.http.call(e, { schema, body, mode: c.mode, signal: c.signal, timeoutMs });
  }

  // unsigned
  health = async (c?: Call) => this.get(CLOUD_ENDPOINTS.health, HealthAnswer, c);
  keys = async (c?: Call) => this.get(CLOUD_ENDPOINTS.keys, Jwks, c);
  register = async (body: z.input<typeof RegisterBody>, c?: Call) =>
    this.post(CLOUD_ENDPOINTS.register, RegisterAnswer, input(RegisterBody, body, 'sites/register'), c);

  // sites
  siteStatus = async (c?: Call) => this.get(CLOUD_ENDPOINTS.siteStatus, SiteStatusAnswer, c);
  siteSync = async (body: z.input<typeof SyncBody>, c?: Call) =>
    this.post(CLOUD_ENDPOINTS.siteSync, SyncAnswer, input(SyncBody, body, 'sites/sync'), c);
  siteDisconnect = async (c?: Call) => this.post(CLOUD_ENDPOINTS.siteDisconnect, DisconnectAnswer, undefined, c);

  // license
  licenseActivate = async (licenseKey: string, c?: Call) =>
    this.post(
      CLOUD_ENDPOINTS.licenseActivate,
      LicenseAnswer,
      input(ActivateBody, { license_key: licenseKey }, 'license key'),
      c,
    );
  licenseDeactivate = async (c?: Call) => this.post(CLOUD_ENDPOINTS.licenseDeactivate, DeactivateAnswer, undefined, c);
  licenseStatus = async (c?: Call) => this.get(CLOUD_ENDPOINTS.licenseStatus, LicenseAnswer, c);
  licenseRefresh = async (c?: Call) => this.post(CLOUD_ENDPOINTS.licenseRefresh, LicenseAnswer, undefined, c);

  // products and entitlements
  products = async (c?: Call) => this.get(CLOUD_ENDPOINTS.products, ProductsAnswer, c);
  features = async (c?: Call) => this.get(CLOUD_ENDPOINTS.features, FeaturesAnswer, c);
  entitlements = async (c?: Call) => this.get(CLOUD_ENDPOINTS.entitlements, EntitlementsAnswer, c);
  entitlementsCheck = async (feature: string, c?: Call) =>
    this.post(CLOUD_ENDPOINTS.entitlementsCheck, CheckAnswer, input(CheckBody, { feature }, 'feature'), c);

  // usage
  /** A batch as exact bytes (the outbox hashes them for the Idempotency-Key). */
  usageRecord = async (rawBody: Buffer, idempotencyKey: string, c: Call = {}) =>
    this.http.call(CLOUD_ENDPOINTS.usageRecord, {
      schema: UsageRecordAnswer,
      rawBody,
      idempotencyKey,
      mode: c.mode,
      signal: c.signal,
    });
  usageSummary = async (q: z.input<typeof UsageSummaryQuery> = {}, c?: Call) =>
    this.get(CLOUD_ENDPOINTS.usageSummary, UsageSummaryAnswer, c, queryOf(UsageSummaryQuery, q, 'usage/summary'));
  usageLimits = async (c?: Call) => this.get(CLOUD_ENDPOINTS.usageLimits, UsageLimitsAnswer, c);
  usageHistory = async (q: z.input<typeof UsageHistoryQuery> = {}, c?: Call) =>
    this.get(CLOUD_ENDPOINTS.usageHistory, UsageHistoryAnswer, c, queryOf(UsageHistoryQuery, q, 'usage/history'));

  // AI
  aiProviders = async (c?: Call) => this.get(CLOUD_AI_UPDATES_ENDPOINTS.aiProviders, AiProvidersAnswer, c);
  aiModels = async (c?: Call) => this.get(CLOUD_AI_UPDATES_ENDPOINTS.aiModels, AiModelsAnswer, c);
  aiRoute = async (req: z.input<typeof AiGenerateRequest>, c?: Call) =>
    this.post(CLOUD_AI_UPDATES_ENDPOINTS.aiRoute, AiRouteAnswer, input(AiGenerateRequest, req, 'ai/route'), c);
  aiGenerate = async (req: z.input<typeof AiGenerateRequest>, c?: Call) =>
    this.post(
      CLOUD_AI_UPDATES_ENDPOINTS.aiGenerate,
      AiGenerateAnswer,
      input(AiGenerateRequest, req, 'ai/generate'),
      c,
      AI_GENERATE_TIMEOUT_MS,
    );

  // updates
  updatesCheck = async (q: UpdatesQuery, c?: Call) =>
    this.get(CLOUD_AI_UPDATES_ENDPOINTS.updatesCheck, UpdatesCheckAnswer, c, queryOf(UpdatesQuery, q, 'updates/check'));
  updatesPackage = async (q: UpdatesQuery, c?: Call) =>
    this.get(
      CLOUD_AI_UPDATES_ENDPOINTS.updatesPackage,
      UpdatesPackageAnswer,
      c,
      queryOf(UpdatesQuery, q, 'updates/package'),
    );
  updatesVerify = async (body: UpdatesVerifyBody, c?: Call) =>
    this.post(
      CLOUD_AI_UPDATES_ENDPOINTS.updatesVerify,
      UpdatesVerifyAnswer,
      input(UpdatesVerifyBody, body, 'updates/verify'),
      c,
    );
}

/** A query object checked by its schema, as strings (absent and default-less fields left out). */
function queryOf<S extends z.ZodType>(schema: S, q: unknown, what: string): Record<string, string | undefined> {
  const parsed = input(schema, q, what) as Record<string, unknown>;
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(parsed)) if (v !== undefined) out[k] = String(v);
  return out;
}
