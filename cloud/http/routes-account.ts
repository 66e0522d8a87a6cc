import {
  AgencyEntitlementsQuery,
  AgencySitesQuery,
  AgencyUsageQuery,
  HEADER_NEXT_CURSOR,
  LimitSetBody,
  LogsQuery,
  PolicySetBody,
  ReportCreateBody,
  type AccountEndpoint,
} from '../../main/contract/cloud/index.ts';
import { requireAccountFeature } from '../services/account-auth.ts';
import { agencyEntitlements, agencySites, agencyUsage } from '../services/agency-service.ts';
import { exportLogs, policyView, setAccountLimit, setPolicy } from '../services/enterprise-service.ts';
import { createReport, getReport, getReportCsv, listReports } from '../services/reports-service.ts';
import { parseBody, parseQuery } from './query.ts';
import { noQuery, ok, type RouteHandler, type RouteInput } from './routes.ts';

const AGENCY = 'agency.sites';
const ENTERPRISE = 'enterprise.controls';
/** Agency views need `agency.sites` on one of the account's active plans; enterprise controls need `enterprise.controls`. */
const needs =
  (feature: string, h: RouteHandler): RouteHandler =>
  async (i: RouteInput) => {
    await requireAccountFeature(i.ctx, i.account, feature);
    return h(i);
  };

/** The account endpoints (agency views, enterprise controls), behind the account's API key. */
export const ACCOUNT_ROUTES: Record<AccountEndpoint, RouteHandler> = {
  agencySites: needs(AGENCY, (i) =>
    ok(
      agencySites(
        i.ctx,
        i.account,
        parseQuery(AgencySitesQuery, i.query, ['status', 'environment', 'limit', 'cursor']),
      ),
    ),
  ),
  agencyUsage: needs(AGENCY, (i) =>
    ok(
      agencyUsage(
        i.ctx,
        i.account,
        parseQuery(AgencyUsageQuery, i.query, ['period', 'from', 'to', 'site', 'product', 'metric', 'limit', 'cursor']),
      ),
    ),
  ),
  agencyEntitlements: needs(AGENCY, (i) =>
    ok(agencyEntitlements(i.ctx, i.account, parseQuery(AgencyEntitlementsQuery, i.query, ['limit', 'cursor']))),
  ),
  agencyReports: needs(AGENCY, (i) => (noQuery(i), ok(listReports(i.ctx, i.account)))),
  agencyReportCreate: needs(AGENCY, (i) => createReport(i.ctx, i.account, parseBody(ReportCreateBody, i.body))),
  agencyReport: needs(AGENCY, (i) => (noQuery(i), ok(getReport(i.ctx, i.account, i.params.id!)))),
  agencyReportCsv: needs(AGENCY, async (i) => {
    noQuery(i);
    const text = await getReportCsv(i.ctx, i.account, i.params.id!);
    return {
      raw: { contentType: 'text/csv; charset=utf-8', text },
      headers: {
        'Content-Disposition': `attachment; filename="report-${i.params.id!.replace(/[^A-Za-z0-9_-]/g, '')}.csv"`,
      },
    };
  }),
  enterprisePolicy: needs(ENTERPRISE, (i) => (noQuery(i), ok(policyView(i.ctx, i.account)))),
  enterprisePolicySet: needs(ENTERPRISE, (i) => ok(setPolicy(i.ctx, i.account, parseBody(PolicySetBody, i.body)))),
  enterpriseLimitsSet: needs(ENTERPRISE, (i) => ok(setAccountLimit(i.ctx, i.account, parseBody(LimitSetBody, i.body)))),
  enterpriseLogs: needs(ENTERPRISE, async (i) => {
    const out = await exportLogs(
      i.ctx,
      i.account,
      parseQuery(LogsQuery, i.query, ['format', 'site', 'endpoint', 'status', 'from', 'to', 'limit', 'cursor']),
    );
    const headers: Record<string, string> = out.next ? { [HEADER_NEXT_CURSOR]: out.next } : {};
    return { raw: { contentType: out.contentType, text: out.text }, headers };
  }),
};
