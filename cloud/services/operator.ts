import { z } from 'zod';
import {
  CloudProduct,
  FeatureKey,
  Metric,
  Period,
  PlanId,
  Scope,
  SupportPriority,
} from '../../main/contract/cloud/index.ts';
import { shortId } from '../../main/lib/ids.ts';
import { nameText } from '../../main/contract/cloud/names.ts';
import { newSecret, previewOf } from '../crypto/hash.ts';
import { fingerprint } from '../crypto/signing-keys.ts';
import { PlanLimit } from '../domain/plans.ts';
import { stagingCap } from '../domain/staging.ts';
import { CloudError } from '../errors.ts';
import { listPlans, listProductSwitches, setProductSwitch, upsertPlan } from '../repo/catalog-repo.ts';
import { allKeys } from '../repo/keys-repo.ts';
import { listLimits, removeLimit, setLimit } from '../repo/limits-repo.ts';
import {
  accountById,
  insertAccount,
  insertLicense,
  licenseById,
  listAccounts,
  listLicenses,
  revokeLicense,
  setLicenseExpiry,
} from '../repo/licenses-repo.ts';
import { assignSite, listSites, siteById } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import { hashLicenseKey } from './licenses-service.ts';
import { AI_RELEASES_COMMANDS, type AiReleasesCommand } from './operator-ai-releases.ts';
import { resignReleases } from './releases-service.ts';
import { disconnect } from './sites-service.ts';

/**
 * The operator's commands, as data: the CLI builds one from its flags and
 * runs it on the ledger directly, or sends it to the running service that
 * holds the embedded database. Each command validates its own arguments.
 */
const name = nameText(200);
const id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_.:/-]+$/, 'an id');
const when = z.iso
  .datetime({ offset: true })
  .or(z.iso.date())
  .transform((s) => new Date(s.length === 10 ? `${s}T00:00:00Z` : s).toISOString());
const label = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9 _.-]+$/, 'letters, digits, space, _ . -');

export const OPERATOR_COMMANDS = {
  'accounts.add': z.strictObject({ name }),
  'accounts.list': z.strictObject({}),
  'licenses.create': z.strictObject({
    plan: PlanId,
    account: id.optional(),
    sites: z.number().int().min(0).max(100_000).optional(),
    staging_sites: z.number().int().min(0).max(100_000).optional(),
    expires: when.optional(),
  }),
  'licenses.list': z.strictObject({ account: id.optional() }),
  'licenses.revoke': z.strictObject({ id }),
  'licenses.extend': z.strictObject({ id, expires: when.nullable() }),
  'plans.list': z.strictObject({}),
  'plans.set': z.strictObject({
    id: PlanId,
    rank: z.number().int().min(0).max(1_000_000).optional(),
    features: z.array(FeatureKey).max(200).optional(),
    products: z.array(CloudProduct).optional(),
    site_limit: z.number().int().min(0).max(100_000).optional(),
    limits: z.array(PlanLimit).max(24).optional(),
    update_channels: z.array(label).max(10).optional(),
    support_priority: SupportPriority.nullable().optional(),
  }),
  'limits.set': z.strictObject({
    scope: Scope,
    subject: id,
    metric: Metric,
    period: Period,
    limit: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable(),
  }),
  'limits.list': z.strictObject({}),
  'products.enable': z.strictObject({ product: CloudProduct, account: id.optional(), site: id.optional() }),
  'products.disable': z.strictObject({ product: CloudProduct, account: id.optional(), site: id.optional() }),
  'products.list': z.strictObject({}),
  'sites.list': z.strictObject({ account: id.optional() }),
  'sites.disconnect': z.strictObject({ id }),
  'sites.assign': z.strictObject({ id, department: label.nullable().optional(), project: label.nullable().optional() }),
  'keys.show': z.strictObject({}),
  'keys.rotate': z.strictObject({}),
} as const;
type Part1Command = keyof typeof OPERATOR_COMMANDS;
export type OperatorCommand = Part1Command | AiReleasesCommand;
export const isOperatorCommand = (c: string): c is OperatorCommand =>
  Object.hasOwn(OPERATOR_COMMANDS, c) || Object.hasOwn(AI_RELEASES_COMMANDS, c);

type Args<C extends Part1Command> = z.infer<(typeof OPERATOR_COMMANDS)[C]>;
type Handler<C extends Part1Command> = (ctx: Ctx, a: Args<C>) => Promise<unknown>;

const mustAccount = async (ctx: Ctx, accountId: string) => {
  if (!(await accountById(ctx.db, accountId)))
    throw new CloudError('not_found', `no account '${accountId}': accounts list shows them`);
};

const HANDLERS: { [C in Part1Command]: Handler<C> } = {
  'accounts.add': async (ctx, a) => {
    const account = { id: shortId('acc', 10), name: a.name };
    await insertAccount(ctx.db, account, ctx.now());
    return account;
  },
  'accounts.list': async (ctx) => listAccounts(ctx.db),
  'licenses.create': async (ctx, a) => {
    const plans = await listPlans(ctx.db);
    if (!plans.some((p) => p.id === a.plan))
      throw new CloudError('not_found', `no plan '${a.plan}': plans list shows them`);
    const now = ctx.now();
    let accountId = a.account;
    if (accountId) await mustAccount(ctx, accountId);
    else {
      accountId = shortId('acc', 10);
      await insertAccount(ctx.db, { id: accountId, name: `account of a ${a.plan} license` }, now);
    }
    const key = newSecret('ghl_', 24);
    const license = {
      id: shortId('lic', 10),
      key_hash: hashLicenseKey(key),
      key_preview: previewOf(key),
      account_id: accountId,
      plan_id: a.plan,
      site_limit: a.sites ?? null,
      staging_limit: a.staging_sites ?? null,
      expires_at: a.expires ?? null,
    };
    await insertLicense(ctx.db, license, now);
    ctx.log.info('license created', { license_id: license.id, plan: a.plan });
    const { key_hash: _hash, ...shown } = license;
    return { ...shown, license_key: key };
  },
  // site_limit and staging_limit are the license's own (null: the plan's, one staging site per seat); *_allowed is what holds.
  'licenses.list': async (ctx, a) => {
    const plans = new Map((await listPlans(ctx.db)).map((p) => [p.id, p]));
    return (await listLicenses(ctx.db, a.account)).map(({ key_hash: _h, ...l }) => {
      const sites = l.site_limit ?? plans.get(l.plan_id)?.site_limit ?? null;
      return { ...l, sites_allowed: sites, staging_allowed: stagingCap(l, sites ?? undefined) };
    });
  },
  'licenses.revoke': async (ctx, a) => {
    if (!(await revokeLicense(ctx.db, a.id, ctx.now())) && !(await licenseById(ctx.db, a.id)))
      throw new CloudError('not_found', `no license '${a.id}'`);
    const { key_hash: _h, ...l } = (await licenseById(ctx.db, a.id))!;
    return l;
  },
  'licenses.extend': async (ctx, a) => {
    if (!(await setLicenseExpiry(ctx.db, a.id, a.expires))) throw new CloudError('not_found', `no license '${a.id}'`);
    const { key_hash: _h, ...l } = (await licenseById(ctx.db, a.id))!;
    return l;
  },
  'plans.list': async (ctx) => listPlans(ctx.db),
  'plans.set': async (ctx, a) => {
    const current = (await listPlans(ctx.db)).find((p) => p.id === a.id);
    if (!current && (a.rank === undefined || a.features === undefined))
      throw new CloudError('invalid_request', `plan '${a.id}' is new: give at least its rank and features`);
    const plan = {
      id: a.id,
      rank: a.rank ?? current!.rank,
      features: a.features ?? current!.features,
      products: a.products ?? current?.products ?? [],
      site_limit: a.site_limit ?? current?.site_limit ?? 1,
      limits: a.limits ?? current?.limits ?? [],
      update_channels: a.update_channels ?? current?.update_channels ?? ['stable'],
      support_priority: a.support_priority !== undefined ? a.support_priority : (current?.support_priority ?? null),
    };
    await upsertPlan(ctx.db, plan, ctx.now());
    return plan;
  },
  'limits.set': async (ctx, a) => {
    if (a.limit === null) return { removed: await removeLimit(ctx.db, a) };
    await setLimit(ctx.db, { ...a, limit: a.limit }, ctx.now());
    return a;
  },
  'limits.list': async (ctx) => listLimits(ctx.db),
  'products.enable': (ctx, a) => switchProduct(ctx, a, true),
  'products.disable': (ctx, a) => switchProduct(ctx, a, false),
  'products.list': async (ctx) => listProductSwitches(ctx.db),
  'sites.list': async (ctx, a) =>
    (await listSites(ctx.db, { account_id: a.account })).map(({ secret_enc: _s, ...s }) => s),
  'sites.disconnect': async (ctx, a) => disconnect(ctx, a.id),
  'sites.assign': async (ctx, a) => {
    if (!(await assignSite(ctx.db, a.id, { department: a.department, project: a.project })))
      throw new CloudError('not_found', `no site '${a.id}'`);
    const { secret_enc: _s, ...s } = (await siteById(ctx.db, a.id))!;
    return s;
  },
  'keys.show': async (ctx) => {
    const now = ctx.now();
    return (await allKeys(ctx.db)).map((k) => ({
      kid: k.kid,
      x: k.public_x,
      fingerprint: fingerprint(k.public_x),
      state:
        k.retired_at === null
          ? 'active'
          : k.publish_until && Date.parse(k.publish_until) > now.getTime()
            ? 'retired, published'
            : 'retired',
      created_at: k.created_at,
      publish_until: k.publish_until,
    }));
  },
  'keys.rotate': async (ctx) => ({
    ...(await ctx.keys.rotate(ctx.now())),
    releases_resigned: await resignReleases(ctx),
  }),
};

async function switchProduct(
  ctx: Ctx,
  a: { product: CloudProduct; account?: string; site?: string },
  enabled: boolean,
) {
  if (!!a.account === !!a.site) throw new CloudError('invalid_request', 'name exactly one of --account or --site');
  if (a.account) await mustAccount(ctx, a.account);
  if (a.site && !(await siteById(ctx.db, a.site))) throw new CloudError('not_found', `no site '${a.site}'`);
  const scope = a.account ? 'account' : 'site';
  const subject = (a.account ?? a.site)!;
  await setProductSwitch(ctx.db, scope, subject, a.product, enabled, ctx.now());
  return { scope, subject, product: a.product, enabled };
}

/** Validates and runs one operator command. */
export async function runOperator(ctx: Ctx, command: string, args: unknown): Promise<unknown> {
  if (!isOperatorCommand(command)) throw new CloudError('invalid_request', `unknown operator command '${command}'`);
  const describe = (e: z.ZodError) =>
    e.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ');
  if (Object.hasOwn(AI_RELEASES_COMMANDS, command)) {
    const c = AI_RELEASES_COMMANDS[command as AiReleasesCommand];
    const parsed = c.args.safeParse(args ?? {});
    if (!parsed.success) throw new CloudError('invalid_request', describe(parsed.error));
    return (c.run as (ctx: Ctx, a: unknown) => Promise<unknown>)(ctx, parsed.data);
  }
  return runPart1(ctx, command as Part1Command, args ?? {}, describe);
}

// Generic in the command, so the handler looked up is that command's own (HANDLERS is a mapped type).
function runPart1<C extends Part1Command>(
  ctx: Ctx,
  command: C,
  args: unknown,
  describe: (e: z.ZodError) => string,
): Promise<unknown> {
  const schema: z.ZodType = OPERATOR_COMMANDS[command];
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw new CloudError('invalid_request', describe(parsed.error));
  // Parsed by this command's own schema just above: its Args, which TypeScript cannot tie to a schema looked up by name.
  return HANDLERS[command](ctx, parsed.data as Args<C>);
}
