import { z } from 'zod';
import {
  AccountInfo,
  type ReportCreateBody,
  type ReportTask,
  type UsageReport,
} from '../../main/contract/cloud/index.ts';
import { shortId } from '../../main/lib/ids.ts';
import { csvRow } from '../../main/contract/csv.ts';
import { CloudError } from '../errors.ts';
import { accountRollups, accountSites } from '../repo/agency-repo.ts';
import { lockAccount } from '../repo/licenses-repo.ts';
import {
  activeTasks,
  claimTask,
  failAbandoned,
  failTask,
  finishTask,
  insertTask,
  listTasks,
  pruneFinished,
  pruneTasks,
  taskOf,
  taskResult,
  type TaskRow,
} from '../repo/tasks-repo.ts';
import type { AccountPrincipal } from './account-auth.ts';
import { agencySite, rollupRange } from './agency-service.ts';
import type { Ctx, TaskQueue } from './context.ts';

/**
 * Agency reports as cloud tasks: `POST agency/reports` queues one and
 * answers its id at once (202); any instance runs it (the one that queued
 * it is nudged straight away, the others find it in housekeeping); `GET
 * agency/reports/:id` answers the status and, when done, the report, and
 * `.../csv` the same as CSV. Bounded: 5 reports at once per account, 100,000
 * rows a report, kept 7 days (the newest 50 finished ones per account).
 */
export const MAX_ACTIVE_REPORTS = 5;
export const REPORT_MAX_ROWS = 100_000;
export const REPORT_TTL_MS = 7 * 86_400_000;
/** Finished reports kept per account (the oldest go first), so a busy account cannot fill the database within the 7 days. */
export const KEEP_FINISHED = 50;
/** A running task not finished by then was lost with its instance. */
export const TASK_STALE_MS = 10 * 60_000;

/** What a report covers, as its task row keeps it (jsonb, read back through this schema). */
const ReportRange = z.object({ period: z.enum(['day', 'month']), from: z.string(), to: z.string() });
type ReportRange = z.infer<typeof ReportRange>;
const ReportParams = ReportRange.extend({ account: AccountInfo });
type ReportParams = z.infer<typeof ReportParams>;

export function taskView(t: TaskRow): ReportTask {
  const p = ReportRange.parse(t.params);
  return {
    id: t.id,
    kind: 'usage',
    status: t.status,
    params: { period: p.period, from: p.from, to: p.to },
    created_at: t.created_at,
    started_at: t.started_at,
    finished_at: t.status === 'done' || t.status === 'failed' ? t.finished_at : null,
    expires_at: t.expires_at,
    error: t.error,
    rows: t.result_rows,
  };
}

export async function createReport(ctx: Ctx, p: AccountPrincipal, body: ReportCreateBody) {
  const now = ctx.now();
  const range = rollupRange(body.period, body.from, body.to, now);
  const params: ReportParams = {
    period: body.period,
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    account: p.account,
  };
  // Count and insert under the account's lock: concurrent requests (on any instance) cannot all see room for one more.
  const t = await ctx.db.transaction(async (tx) => {
    await lockAccount(tx, p.account.id);
    if ((await activeTasks(tx, p.account.id)) >= MAX_ACTIVE_REPORTS) return null;
    await pruneFinished(tx, p.account.id, KEEP_FINISHED);
    return insertTask(tx, {
      id: shortId('task', 12),
      account_id: p.account.id,
      kind: body.kind,
      params,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + REPORT_TTL_MS).toISOString(),
    });
  });
  if (!t)
    throw new CloudError(
      'rate_limited',
      `${MAX_ACTIVE_REPORTS} reports are already being generated for this account: wait for one to finish`,
      {},
      { retryAfter: 10 },
    );
  ctx.tasks.kick();
  return { status: 202, body: { success: true as const, account: p.account, task: taskView(t) } };
}

export async function listReports(ctx: Ctx, p: AccountPrincipal) {
  return { success: true as const, account: p.account, tasks: (await listTasks(ctx.db, p.account.id)).map(taskView) };
}

const TASK_ID = /^task_[a-z0-9]{12}$/;

/** A task of this account; another account's id is simply not found. */
async function ownTask(ctx: Ctx, p: AccountPrincipal, id: string): Promise<TaskRow> {
  const t = TASK_ID.test(id) ? await taskOf(ctx.db, p.account.id, id) : null;
  if (!t) throw new CloudError('not_found', `no such report task for this account: GET agency/reports lists them`);
  return t;
}

export async function getReport(ctx: Ctx, p: AccountPrincipal, id: string) {
  const t = await ownTask(ctx, p, id);
  const report = t.status === 'done' ? ((await taskResult(ctx.db, p.account.id, id, 'result')) as UsageReport) : null;
  return { success: true as const, account: p.account, task: taskView(t), report };
}

export async function getReportCsv(ctx: Ctx, p: AccountPrincipal, id: string): Promise<string> {
  const t = await ownTask(ctx, p, id);
  if (t.status !== 'done')
    throw new CloudError(
      'conflict',
      t.status === 'failed'
        ? `the report failed: ${t.error ?? 'no reason given'}`
        : `the report is ${t.status}: ask again when GET agency/reports/${t.id} says done`,
    );
  return String(await taskResult(ctx.db, p.account.id, id, 'result_csv'));
}

const CSV_COLUMNS = [
  'site_id',
  'site_name',
  'site_url',
  'environment',
  'site_status',
  'plan',
  'license_status',
  'product',
  'metric',
  'period_start',
  'amount',
  'events',
];

/** The report itself: every site of the account with its totals, and the roll-up rows; JSON and CSV. */
export async function buildUsageReport(ctx: Pick<Ctx, 'db' | 'now'>, accountId: string, params: ReportParams) {
  const now = ctx.now();
  const sites = (await accountSites(ctx.db, accountId, {}, 0, 1_000_000)).map((r) => agencySite(r, now));
  const rows = await accountRollups(
    ctx.db,
    accountId,
    { period: params.period, from: new Date(params.from), to: new Date(params.to) },
    0,
    REPORT_MAX_ROWS + 1,
  );
  if (rows.length > REPORT_MAX_ROWS)
    throw new CloudError(
      'invalid_request',
      `the report would have more than ${REPORT_MAX_ROWS} rows: narrow the range or use period=month`,
    );
  const bySite = new Map<string, Record<string, number>>();
  const totals: Record<string, number> = {};
  for (const r of rows) {
    const t = bySite.get(r.site_id) ?? {};
    t[r.metric] = (t[r.metric] ?? 0) + r.amount;
    bySite.set(r.site_id, t);
    totals[r.metric] = (totals[r.metric] ?? 0) + r.amount;
  }
  const report: UsageReport = {
    account: params.account,
    period: params.period,
    from: params.from,
    to: params.to,
    generated_at: now.toISOString(),
    sites: sites.map((s) => ({
      site_id: s.site_id,
      name: s.name,
      url: s.url,
      environment: s.environment,
      status: s.status,
      plan: s.license.plan,
      license_status: s.license.status,
      version: s.version,
      last_sync_at: s.last_sync_at,
      totals: bySite.get(s.site_id) ?? {},
    })),
    rows,
    totals,
  };
  const siteOf = new Map(report.sites.map((s) => [s.site_id, s]));
  const lines = [csvRow(CSV_COLUMNS)];
  for (const r of rows) {
    const s = siteOf.get(r.site_id);
    lines.push(
      csvRow([
        r.site_id,
        s?.name,
        s?.url,
        s?.environment,
        s?.status,
        s?.plan,
        s?.license_status,
        r.product,
        r.metric,
        r.period_start,
        r.amount,
        r.events,
      ]),
    );
  }
  return { json: report, csv: lines.join(''), rows: rows.length };
}

/**
 * Runs queued tasks on this instance, one at a time: `kick()` after a task
 * is queued and from housekeeping; `idle()` before the service stops.
 */
export class TaskRunner implements TaskQueue {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(private readonly ctx: Pick<Ctx, 'db' | 'now' | 'log'>) {}

  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((e) => this.ctx.log.warn('cloud task runner failed', { error: (e as Error).message }))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Housekeeping: abandoned tasks fail, expired ones go, and anything runnable runs. */
  async housekeep(): Promise<void> {
    const now = this.ctx.now();
    await failAbandoned(this.ctx.db, new Date(now.getTime() - TASK_STALE_MS), now);
    await pruneTasks(this.ctx.db, now);
    this.kick();
  }

  private async drain(): Promise<void> {
    for (;;) {
      const now = this.ctx.now();
      const t = await claimTask(this.ctx.db, now, new Date(now.getTime() - TASK_STALE_MS));
      if (!t) return;
      await runTask(this.ctx, t);
    }
  }
}

async function runTask(ctx: Pick<Ctx, 'db' | 'now' | 'log'>, t: TaskRow): Promise<void> {
  const started = performance.now();
  try {
    const out = await buildUsageReport(ctx, t.account_id, ReportParams.parse(t.params));
    await finishTask(ctx.db, t, out, ctx.now());
    ctx.log.info('report generated', {
      task_id: t.id,
      account_id: t.account_id,
      rows: out.rows,
      ms: Math.round(performance.now() - started),
    });
  } catch (e) {
    const message =
      e instanceof CloudError
        ? e.message
        : 'the report could not be generated: the vendor has the details in the gateway log';
    if (!(e instanceof CloudError)) ctx.log.error('report failed', { task_id: t.id, error: (e as Error).message });
    await failTask(ctx.db, t, message, ctx.now());
  }
}
