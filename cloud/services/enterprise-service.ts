import type { z } from 'zod';
import {
  FEATURE_CATALOG,
  LOG_COLUMNS,
  type LimitSetBody,
  type LogsQuery,
  type PolicySetBody,
} from '../../main/contract/cloud/index.ts';
import { csvRow } from '../../main/contract/csv.ts';
import { decodeCursor, encodeCursor } from '../domain/cursor.ts';
import { CloudError } from '../errors.ts';
import { accountLimits, countAccountSetLimits, limitExists, removeLimit, setLimit } from '../repo/limits-repo.ts';
import { lockAccount } from '../repo/licenses-repo.ts';
import { accountLog, type LogRow } from '../repo/request-log-repo.ts';
import { aiPolicyOf, policyLayersOf, policyOf, updatePolicy } from '../repo/policies-repo.ts';
import { wideningProviders } from '../domain/policy-layers.ts';
import { siteById } from '../repo/sites-repo.ts';
import type { AccountPrincipal } from './account-auth.ts';
import type { Ctx } from './context.ts';

/**
 * Enterprise controls, through the account's API key: the account's policy
 * for all its sites (allowed AI providers, approved-infrastructure tags, a
 * fallback order, features switched off), its own limits on its scopes, and
 * the export of its request log. The support priority is the vendor's to
 * set (`gatehouse-cloud accounts policy`), shown here.
 */

export async function policyView(ctx: Ctx, p: AccountPrincipal) {
  const row = await policyOf(ctx.db, p.account.id);
  const { operator } = await policyLayersOf(ctx.db, p.account.id);
  return {
    success: true as const,
    account: p.account,
    policy: {
      ai: aiPolicyOf(row),
      features_off: row?.features_off ?? [],
      limits: await accountLimits(ctx.db, p.account.id),
      operator: {
        ai: {
          allowed_providers: operator.allowed_providers ?? null,
          required_tags: operator.required_tags ?? [],
          fallback_order: operator.fallback_order ?? [],
        },
        features_off: operator.features_off ?? [],
      },
    },
  };
}

export async function setPolicy(ctx: Ctx, p: AccountPrincipal, body: PolicySetBody) {
  const unknown = body.features_off?.find((f) => !FEATURE_CATALOG.some((d) => d.key === f));
  if (unknown) throw new CloudError('invalid_request', `unknown feature '${unknown}': GET features lists them`);
  const change = {
    allowed_providers: body.ai?.allowed_providers,
    required_tags: body.ai?.required_tags,
    fallback_order: body.ai?.fallback_order,
    features_off: body.features_off && [...new Set(body.features_off)],
  };
  // The account's layer can only narrow the operator's: a provider the operator does not allow is refused, not ignored.
  await updatePolicy(ctx.db, p.account.id, 'account', change, ctx.now(), ({ operator }) => {
    const widening = wideningProviders(operator, change.allowed_providers);
    if (widening.length) {
      throw new CloudError(
        'forbidden',
        `the gateway's operator allows only ${operator.allowed_providers!.join(', ') || 'no provider'} for this account: ${widening.join(', ')} cannot be added (ask the operator)`,
        { operator_allowed_providers: operator.allowed_providers },
      );
    }
  });
  ctx.log.info('account policy changed', { account_id: p.account.id, by: p.key_id });
  return policyView(ctx, p);
}

/** Limits an account may set itself (`enterprise/limits`), over all its scopes: room for every metric and period of a few hundred departments, projects or sites. */
export const MAX_ACCOUNT_LIMITS = 2000;

/** A limit the account sets on one of its own scopes; it adds to the plan's limits, it cannot lift them. */
export async function setAccountLimit(ctx: Ctx, p: AccountPrincipal, b: LimitSetBody) {
  let subject: string;
  if (b.scope === 'account') {
    if (b.subject !== undefined && b.subject !== p.account.id)
      throw new CloudError('invalid_request', 'an account limit is on your own account: leave subject out');
    subject = p.account.id;
  } else if (b.scope === 'site') {
    const site = b.subject ? await siteById(ctx.db, b.subject) : null;
    if (!site || site.account_id !== p.account.id)
      throw new CloudError(
        'not_found',
        `no site '${(b.subject ?? '').slice(0, 64)}' in this account: GET agency/sites lists them`,
      );
    subject = site.id;
  } else {
    if (!b.subject || b.subject.includes('/'))
      throw new CloudError('invalid_request', `give the ${b.scope} name as subject (the label set with sites assign)`);
    subject = `${p.account.id}/${b.subject}`;
  }
  const key = { scope: b.scope, subject, metric: b.metric, period: b.period, set_by: 'account' as const };
  if (b.limit === null) await removeLimit(ctx.db, key);
  else {
    const limit = b.limit;
    // Department and project names are the account's to choose: without a cap, one key could store limits without end.
    await ctx.db.transaction(async (tx) => {
      await lockAccount(tx, p.account.id);
      if ((await countAccountSetLimits(tx, p.account.id)) >= MAX_ACCOUNT_LIMITS && !(await limitExists(tx, key))) {
        throw new CloudError(
          'conflict',
          `this account already has ${MAX_ACCOUNT_LIMITS} limits of its own: remove one (limit: null) before adding another`,
          { max_limits: MAX_ACCOUNT_LIMITS },
        );
      }
      await setLimit(tx, { ...key, limit }, ctx.now());
    });
  }
  ctx.log.info('account limit changed', {
    account_id: p.account.id,
    scope: b.scope,
    metric: b.metric,
    period: b.period,
    limit: b.limit,
  });
  return policyView(ctx, p);
}

function statusRange(s: string | undefined): [number, number] | undefined {
  if (!s) return undefined;
  if (s.endsWith('xx')) return [Number(s[0]) * 100, Number(s[0]) * 100 + 99];
  return [Number(s), Number(s)];
}

/**
 * enterprise/logs: the account's requests as JSONL or CSV, oldest first,
 * `limit` rows a page (the next page's cursor in a header). This instance's
 * buffered entries are written first; other instances' reach the table
 * within a second.
 */
export async function exportLogs(ctx: Ctx, p: AccountPrincipal, q: z.output<typeof LogsQuery>) {
  const after = decodeCursor(q.cursor);
  if (after === null)
    throw new CloudError(
      'invalid_request',
      'cursor is not one this gateway gave: pass the Gatehouse-Next-Cursor header of the previous page as it is',
    );
  await ctx.requestLog.flush();
  const rows = await accountLog(ctx.db, {
    account_id: p.account.id,
    site: q.site,
    endpoint: q.endpoint,
    status: statusRange(q.status),
    from: q.from ? new Date(q.from) : undefined,
    to: q.to ? new Date(q.to) : undefined,
    after,
    limit: q.limit + 1,
  });
  const page = rows.slice(0, q.limit);
  const next = rows.length > q.limit ? encodeCursor(page.at(-1)!.id) : null;
  const cells = (r: LogRow) => LOG_COLUMNS.map((c) => r[c]);
  const text =
    q.format === 'csv'
      ? csvRow(LOG_COLUMNS) + page.map((r) => csvRow(cells(r))).join('')
      : page.map((r) => `${JSON.stringify(Object.fromEntries(LOG_COLUMNS.map((c) => [c, r[c]])))}\n`).join('');
  return {
    text,
    contentType: q.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    next,
  };
}
