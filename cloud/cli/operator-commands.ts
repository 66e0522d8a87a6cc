import { CloudError } from '../errors.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openLedger, PGDATA_DIR } from '../ledger.ts';
import { callOperatorSocket } from '../operator-rpc.ts';
import { lockDataDir, readRuntime } from '../runtime.ts';
import { runOperator, type OperatorCommand } from '../services/operator.ts';
import type { Logger } from '../../main/lib/logger.ts';
import { intFlag, list, out, parse, resolveCloudDataDir, resolveDatabaseUrl, UsageError } from './args.ts';
import { operatorOutput } from './operator-output.ts';
import { NESTED, AI_RELEASES_FLAGS, aiReleasesArgsFor } from './ai-releases-args.ts';
import { AI_RELEASES_COMMANDS, type AiReleasesCommand } from '../services/operator-ai-releases.ts';

/**
 * The operator commands: flags -> `{command, args}`, then run on the ledger
 * (PostgreSQL directly; the embedded database directly when no service holds
 * it, else through the service's operator socket).
 */
export const SUBCOMMANDS: Record<string, string[]> = {
  accounts: ['add', 'list', 'keys', 'policy'],
  licenses: ['create', 'list', 'revoke', 'extend'],
  plans: ['list', 'set'],
  limits: ['list', 'set'],
  products: ['list', 'enable', 'disable'],
  sites: ['list', 'disconnect', 'assign'],
  keys: ['show', 'rotate'],
  providers: ['add', 'list', 'remove', 'disable', 'enable', 'class'],
  releases: ['publish', 'list', 'stage'],
};

const FLAGS = {
  plan: { type: 'string' },
  account: { type: 'string' },
  site: { type: 'string' },
  sites: { type: 'string' },
  'staging-sites': { type: 'string' },
  expires: { type: 'string' },
  rank: { type: 'string' },
  features: { type: 'string' },
  products: { type: 'string' },
  'site-limit': { type: 'string' },
  limits: { type: 'string' },
  channels: { type: 'string' },
  scope: { type: 'string' },
  subject: { type: 'string' },
  metric: { type: 'string' },
  period: { type: 'string' },
  limit: { type: 'string' },
  department: { type: 'string' },
  project: { type: 'string' },
  ...AI_RELEASES_FLAGS,
} as const;

type Values = ReturnType<typeof parse<typeof FLAGS>>['values'];

function one(positionals: string[], what: string): string {
  const [v, ...rest] = positionals;
  if (v === undefined) throw new UsageError(`give the ${what}`);
  if (rest.length) throw new UsageError(`unexpected argument '${rest[0]}'`);
  return v;
}

const none = (positionals: string[]) => {
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  return {};
};

function planLimits(v: string | undefined) {
  return list(v)?.map((item) => {
    const [metric, period, n] = item.split(':');
    if (!metric || !period || n === undefined || !/^\d+$/.test(n))
      throw new UsageError(`--limits takes metric:period:N items, like ai_tokens:month:1000000 (got '${item}')`);
    return { metric, period, limit: Number(n) };
  });
}

/** Builds the command's arguments from the flags; the command validates them again itself. */
function argsFor(command: OperatorCommand, p: string[], v: Values): Record<string, unknown> {
  const defined = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined));
  switch (command) {
    case 'accounts.add':
      return { name: one(p, 'account name') };
    case 'licenses.create':
      if (!v.plan) throw new UsageError('licenses create needs --plan');
      return defined({
        ...none(p),
        plan: v.plan,
        account: v.account,
        sites: intFlag('sites', v.sites, 0, 100_000),
        staging_sites: intFlag('staging-sites', v['staging-sites'], 0, 100_000),
        expires: v.expires,
      });
    case 'licenses.list':
    case 'sites.list':
      return defined({ ...none(p), account: v.account });
    case 'licenses.revoke':
    case 'sites.disconnect':
      return { id: one(p, 'id') };
    case 'licenses.extend':
      if (!v.expires) throw new UsageError('licenses extend needs --expires DATE (or never)');
      return { id: one(p, 'license id'), expires: v.expires === 'never' ? null : v.expires };
    case 'plans.set':
      return defined({
        support_priority: v['support-priority'] === 'none' ? null : v['support-priority'],
        id: one(p, 'plan id'),
        rank: intFlag('rank', v.rank, 0, 1_000_000),
        features: list(v.features),
        products: list(v.products),
        site_limit: intFlag('site-limit', v['site-limit'], 0, 100_000),
        limits: planLimits(v.limits),
        update_channels: list(v.channels),
      });
    case 'limits.set':
      for (const f of ['scope', 'subject', 'metric', 'period', 'limit'] as const)
        if (!v[f]) throw new UsageError(`limits set needs --${f}`);
      return {
        ...none(p),
        scope: v.scope,
        subject: v.subject,
        metric: v.metric,
        period: v.period,
        limit: v.limit === 'none' ? null : intFlag('limit', v.limit, 0, Number.MAX_SAFE_INTEGER),
      };
    case 'products.enable':
    case 'products.disable':
      return defined({ product: one(p, 'product'), account: v.account, site: v.site });
    case 'sites.assign':
      return defined({
        id: one(p, 'site id'),
        department: v.department === '' ? null : v.department,
        project: v.project === '' ? null : v.project,
      });
    default:
      return none(p);
  }
}

export async function runOperatorCli(
  group: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  log: Logger,
): Promise<void> {
  const verbs = NESTED[group]?.[args[0]!];
  if (verbs && !verbs.includes(args[1] ?? ''))
    throw new UsageError(`${group} ${args[0]} needs a command: ${verbs.join(', ')}`);
  const { values, positionals } = parse(args.slice(verbs ? 2 : 1), FLAGS);
  const command = (verbs ? `${group}.${args[0]}.${args[1]}` : `${group}.${args[0]}`) as OperatorCommand;
  const commandArgs = Object.hasOwn(AI_RELEASES_COMMANDS, command)
    ? aiReleasesArgsFor(command as AiReleasesCommand, positionals, values)
    : argsFor(command, positionals, values);
  const dataDir = resolveCloudDataDir(values['data-dir'], env);
  const databaseUrl = resolveDatabaseUrl(values['database-url'], env);
  let data: unknown;
  const running = databaseUrl ? null : await readRuntime(dataDir);
  if (running?.operator_socket && running.operator_token) {
    data = await callOperatorSocket(running.operator_socket, running.operator_token, command, commandArgs);
  } else {
    const unlock = databaseUrl ? async () => {} : await lockDataDir(dataDir);
    try {
      if (!databaseUrl && !existsSync(join(dataDir, PGDATA_DIR)))
        process.stderr.write(
          `Creating the embedded database in ${join(dataDir, PGDATA_DIR)} (first use: this takes a little while)...\n`,
        );
      const ctx = await openLedger({ dataDir, databaseUrl, env, log, releasesDir: values['releases-dir'] });
      try {
        data = await runOperator(ctx, command, commandArgs);
      } finally {
        await ctx.db.close();
      }
    } finally {
      await unlock();
    }
  }
  out(!!values.json, data, () => operatorOutput(command, data));
}

export { CloudError };
