import { z } from 'zod';
import {
  ActivateBody,
  CheckBody,
  HEADER_IDEMPOTENCY_KEY,
  RegisterBody,
  SyncBody,
  UsageHistoryQuery,
  UsageSummaryQuery,
  type CloudEndpoint,
} from '../../main/contract/cloud/index.ts';
import { sha256Hex } from '../crypto/hash.ts';
import { CloudError } from '../errors.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import type { AccountPrincipal } from '../services/account-auth.ts';
import type { Ctx } from '../services/context.ts';
import * as entitlements from '../services/entitlements-service.ts';
import * as licenses from '../services/licenses-service.ts';
import { disconnect, registerSite, siteStatus, syncSite } from '../services/sites-service.ts';
import { recordUsage } from '../services/usage-service.ts';
import { usageHistory, usageLimits, usageSummary } from '../services/usage-queries.ts';
import { parseBody, parseQuery } from './query.ts';
import { recordUsageEvents } from '../metrics.ts';

export interface RouteInput {
  ctx: Ctx;
  /** the verified site (signed routes only) */
  site: SiteRow;
  /** the verified account (account routes only) */
  account: AccountPrincipal;
  /** the parsed JSON body ({} for an empty one) */
  body: unknown;
  raw: Buffer;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  /** path parameters (`:id`, `:token`), decoded */
  params: Record<string, string>;
  /** scheme and authority the site reached us at (for URLs we hand out) */
  origin: string;
  requestId: string;
  /** aborted when the caller closes the connection before the answer */
  signal: AbortSignal;
  /** token routes: the site the token names, once known (the log, and the site's own rate limit: throws when it is spent) */
  admitSite: (site: SiteRow) => void;
}

export interface RouteAnswer {
  status?: number;
  /** a JSON answer */
  body?: unknown;
  headers?: Record<string, string>;
  /** or a text or file answer */
  raw?: {
    contentType: string;
    text?: string;
    file?: { size: number; stream: () => NodeJS.ReadableStream; name: string };
  };
  /** token routes: whom the answer is for (the log, and the plan and support headers) */
  site?: SiteRow;
  support?: { plan: string | null; support_priority: string | null };
}

export type RouteHandler = (i: RouteInput) => Promise<RouteAnswer>;

export const ok = async (p: Promise<unknown>): Promise<RouteAnswer> => ({ body: await p });
const NONE = z.object({});
export const noQuery = (i: RouteInput) => parseQuery(NONE, i.query, []);

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** One handler per endpoint of part 1; `health` and `keys` are answered by the handler itself (no database read beyond keys). */
export const ROUTES: Record<Exclude<CloudEndpoint, 'health' | 'keys'>, RouteHandler> = {
  register: (i) => ok(registerSite(i.ctx, parseBody(RegisterBody, i.body))),
  siteStatus: (i) => (noQuery(i), ok(siteStatus(i.ctx, i.site))),
  siteSync: (i) => ok(syncSite(i.ctx, i.site, parseBody(SyncBody, i.body))),
  siteDisconnect: (i) => ok(disconnect(i.ctx, i.site.id)),
  licenseActivate: (i) => ok(licenses.activate(i.ctx, i.site, parseBody(ActivateBody, i.body).license_key)),
  licenseDeactivate: (i) => ok(licenses.deactivate(i.ctx, i.site)),
  licenseStatus: (i) => (noQuery(i), ok(licenses.status(i.ctx, i.site))),
  licenseRefresh: (i) => ok(licenses.refresh(i.ctx, i.site)),
  products: (i) => (noQuery(i), ok(entitlements.products(i.ctx, i.site))),
  features: (i) => (noQuery(i), ok(entitlements.features(i.ctx, i.site))),
  entitlements: (i) => (noQuery(i), ok(entitlements.all(i.ctx, i.site))),
  entitlementsCheck: (i) => ok(entitlements.check(i.ctx, i.site, parseBody(CheckBody, i.body).feature)),
  usageRecord: async (i) => {
    const key = i.headers[HEADER_IDEMPOTENCY_KEY];
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key))
      throw new CloudError(
        'invalid_request',
        'usage/record needs an Idempotency-Key header: 1 to 200 printable characters, new for each new request and the same on its retries',
      );
    const out = await recordUsage(i.ctx, i.site, { body: i.body, idempotencyKey: key, bodyHash: sha256Hex(i.raw) });
    const headers: Record<string, string> = out.replayed ? { 'Idempotent-Replayed': 'true' } : {};
    if (!out.replayed) recordUsageEvents(out.answer.accepted);
    return { body: out.answer, headers };
  },
  usageSummary: (i) => ok(usageSummary(i.ctx, i.site, parseQuery(UsageSummaryQuery, i.query, ['period', 'at']))),
  usageLimits: (i) => (noQuery(i), ok(usageLimits(i.ctx, i.site))),
  usageHistory: (i) =>
    ok(
      usageHistory(
        i.ctx,
        i.site,
        parseQuery(UsageHistoryQuery, i.query, [
          'period',
          'metric',
          'feature',
          'product',
          'from',
          'to',
          'limit',
          'cursor',
        ]),
      ),
    ),
};
