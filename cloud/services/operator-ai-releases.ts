import { z } from 'zod';
import {
  AiModelName,
  FeatureKey,
  ReleaseArch,
  ReleaseChannel,
  ReleasePlatform,
  ReleaseVersion,
  SupportPriority,
} from '../../main/contract/cloud/index.ts';
import { shortId } from '../../main/lib/ids.ts';
import { nameText } from '../../main/contract/cloud/names.ts';
import { ApiKeyEnv, ProviderBaseUrl, ProviderId, ProviderKind, ProviderRecord } from '../ai/provider-record.ts';
import { AiTag } from '../../main/contract/cloud/index.ts';
import { newSecret, previewOf } from '../crypto/hash.ts';
import { CloudError } from '../errors.ts';
import { accountById } from '../repo/licenses-repo.ts';
import {
  insertAccountKey,
  listAccountKeys,
  policyLayersOf,
  policyOf,
  revokeAccountKey,
  updatePolicy,
} from '../repo/policies-repo.ts';
import {
  insertProvider,
  listProviders,
  modelClasses,
  providerOvershoots,
  removeProvider,
  saveModelClasses,
  setProviderEnabled,
} from '../repo/providers-repo.ts';
import { listReleases } from '../repo/releases-repo.ts';
import { hashAccountKey } from './account-auth.ts';
import type { Ctx } from './context.ts';
import { publishRelease, stageRelease } from './releases-service.ts';

/**
 * The operator commands of AI and releases: the AI provider registry and model
 * classes, account API keys and policies, and releases. Same shape as
 * the other operator commands' (arguments as a zod schema, checked again here whatever the CLI
 * sent), merged into runOperator.
 */
const label = nameText(100);
const id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_.:/-]+$/, 'an id');
const product = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a product id');

const command = <S extends z.ZodType>(args: S, run: (ctx: Ctx, a: z.output<S>) => Promise<unknown>) => ({ args, run });

const mustAccount = async (ctx: Ctx, accountId: string) => {
  if (!(await accountById(ctx.db, accountId)))
    throw new CloudError('not_found', `no account '${accountId}': accounts list shows them`);
};

/** The effective policy, and the two layers it is made of (the operator's, which the account can only narrow, and the account's own). */
const policyView = async (ctx: Ctx, account: string) => {
  const p = await policyOf(ctx.db, account);
  const layers = await policyLayersOf(ctx.db, account);
  return {
    account_id: account,
    ai_allowed_providers: p?.ai_allowed_providers ?? null,
    ai_required_tags: p?.ai_required_tags ?? [],
    ai_fallback_order: p?.ai_fallback_order ?? [],
    features_off: p?.features_off ?? [],
    support_priority: p?.support_priority ?? null,
    layers,
  };
};

export const AI_RELEASES_COMMANDS = {
  'providers.add': command(
    z.strictObject({
      id: ProviderId,
      kind: ProviderKind,
      base_url: ProviderBaseUrl,
      api_key_env: ApiKeyEnv,
      models: z.array(AiModelName).min(1).max(100),
      tags: z.array(AiTag).max(16).default([]),
      enabled: z.boolean().default(true),
    }),
    async (ctx, a) => {
      const p = ProviderRecord.parse(a);
      await insertProvider(ctx.db, p, ctx.now());
      ctx.log.info('ai provider added', { provider: p.id, kind: p.kind });
      return p;
    },
  ),
  'providers.list': command(z.strictObject({}), async (ctx) => ({
    providers: await listProviders(ctx.db),
    classes: await modelClasses(ctx.db),
    overshoots: await providerOvershoots(ctx.db),
  })),
  'providers.remove': command(z.strictObject({ id: ProviderId }), async (ctx, a) => {
    if (!(await removeProvider(ctx.db, a.id)))
      throw new CloudError('not_found', `no provider '${a.id}': providers list shows them`);
    return { id: a.id, removed: true };
  }),
  'providers.disable': command(z.strictObject({ id: ProviderId }), async (ctx, a) => switchProvider(ctx, a.id, false)),
  'providers.enable': command(z.strictObject({ id: ProviderId }), async (ctx, a) => switchProvider(ctx, a.id, true)),
  'providers.class': command(
    z.strictObject({ name: AiModelName, models: z.array(AiModelName).min(1).max(20).nullable() }),
    async (ctx, a) => {
      const classes = { ...(await modelClasses(ctx.db)) };
      if (a.models === null) delete classes[a.name];
      else classes[a.name] = a.models;
      await saveModelClasses(ctx.db, classes);
      return classes;
    },
  ),

  'accounts.keys.create': command(z.strictObject({ account: id, label: label.optional() }), async (ctx, a) => {
    await mustAccount(ctx, a.account);
    const key = newSecret('gha_', 32);
    const row = {
      id: shortId('akey', 10),
      account_id: a.account,
      key_hash: hashAccountKey(key),
      key_preview: previewOf(key),
      label: a.label ?? null,
    };
    await insertAccountKey(ctx.db, row, ctx.now());
    ctx.log.info('account key created', { account_id: a.account, key_id: row.id });
    return { id: row.id, account_id: row.account_id, key_preview: row.key_preview, label: row.label, account_key: key };
  }),
  'accounts.keys.list': command(z.strictObject({ account: id.optional() }), async (ctx, a) =>
    listAccountKeys(ctx.db, a.account),
  ),
  'accounts.keys.revoke': command(z.strictObject({ id }), async (ctx, a) => {
    const k = await revokeAccountKey(ctx.db, a.id, ctx.now());
    if (!k) throw new CloudError('not_found', `no account key '${a.id}': accounts keys list shows them`);
    return k;
  }),
  'accounts.policy.show': command(z.strictObject({ account: id }), async (ctx, a) => {
    await mustAccount(ctx, a.account);
    return policyView(ctx, a.account);
  }),
  'accounts.policy.set': command(
    z.strictObject({
      account: id,
      ai_allowed_providers: z.array(ProviderId).max(100).nullable().optional(),
      ai_required_tags: z.array(AiTag).max(16).optional(),
      ai_fallback_order: z.array(ProviderId).max(100).optional(),
      features_off: z.array(FeatureKey).max(100).optional(),
      support_priority: SupportPriority.nullable().optional(),
    }),
    async (ctx, a) => {
      await mustAccount(ctx, a.account);
      const { account, ai_allowed_providers, ai_required_tags, ai_fallback_order, features_off, support_priority } = a;
      await updatePolicy(
        ctx.db,
        account,
        'operator',
        {
          allowed_providers: ai_allowed_providers,
          required_tags: ai_required_tags,
          fallback_order: ai_fallback_order,
          features_off,
          support_priority,
        },
        ctx.now(),
      );
      return policyView(ctx, account);
    },
  ),

  'releases.publish': command(
    z.strictObject({
      product,
      channel: ReleaseChannel,
      version: ReleaseVersion,
      files: z.array(z.string().min(1).max(4096)).min(1).max(50),
      staging: z.number().int().min(0).max(100).optional(),
      notes: z.string().max(20_000).nullable().optional(),
      platform: ReleasePlatform.optional(),
      arch: ReleaseArch.optional(),
    }),
    async (ctx, a) => publishRelease(ctx, a),
  ),
  'releases.list': command(
    z.strictObject({ product: product.optional(), channel: ReleaseChannel.optional() }),
    async (ctx, a) =>
      (await listReleases(ctx.db, a)).map((r) => ({
        id: r.id,
        product: r.product,
        channel: r.channel,
        version: r.version,
        staging_percentage: r.manifest.staging_percentage,
        files: r.manifest.files.length,
        released_at: r.manifest.released_at,
        updated_at: r.updated_at,
      })),
  ),
  'releases.stage': command(
    z.strictObject({
      product,
      channel: ReleaseChannel,
      version: ReleaseVersion,
      percentage: z.number().int().min(0).max(100),
    }),
    async (ctx, a) => stageRelease(ctx, a),
  ),
} as const;
export type AiReleasesCommand = keyof typeof AI_RELEASES_COMMANDS;

async function switchProvider(ctx: Ctx, providerId: string, enabled: boolean) {
  if (!(await setProviderEnabled(ctx.db, providerId, enabled, ctx.now())))
    throw new CloudError('not_found', `no provider '${providerId}': providers list shows them`);
  return { id: providerId, enabled };
}
