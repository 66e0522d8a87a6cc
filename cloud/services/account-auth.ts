import { ACCOUNT_KEY_PATTERN, HEADER_SIGNATURE_INPUT, type AccountInfo } from '../../main/contract/cloud/index.ts';
import { sha256Hex } from '../crypto/hash.ts';
import { requiredPlan } from '../domain/plans.ts';
import { CloudError } from '../errors.ts';
import { listPlans } from '../repo/catalog-repo.ts';
import { accountByKeyHash } from '../repo/policies-repo.ts';
import type { Ctx } from './context.ts';

/**
 * The account credential of agency and enterprise views: `Authorization:
 * Bearer gha_...`, looked up by its SHA-256 (the key itself is never
 * stored). A site signature is not one: a site reaches only its own data.
 */
export interface AccountPrincipal {
  key_id: string;
  account: AccountInfo;
  /** features of the account's active licenses' plans */
  features: Set<string>;
}

export const hashAccountKey = (key: string): string => sha256Hex(key);
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="gatehouse-cloud"' };

export async function authenticateAccount(
  ctx: Ctx,
  headers: Record<string, string | string[] | undefined>,
): Promise<AccountPrincipal> {
  const auth = headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer ([\x21-\x7e]{1,200})$/.exec(auth) : null;
  if (!m) {
    if (headers[HEADER_SIGNATURE_INPUT] !== undefined)
      throw new CloudError(
        'forbidden',
        "agency and enterprise views need the account's API key (Authorization: Bearer gha_...): a site signature reaches only the site's own data",
      );
    throw new CloudError(
      'unauthorized',
      'this endpoint needs the account API key: Authorization: Bearer gha_... (gatehouse-cloud accounts keys create)',
      {},
      { headers: CHALLENGE },
    );
  }
  const found = ACCOUNT_KEY_PATTERN.test(m[1]!)
    ? await accountByKeyHash(ctx.db, hashAccountKey(m[1]!), ctx.now())
    : null;
  if (!found)
    throw new CloudError(
      'unauthorized',
      'the account API key is unknown or was revoked: ask the vendor for a new one',
      {},
      { headers: CHALLENGE },
    );
  return {
    key_id: found.key_id,
    account: {
      id: found.account_id,
      name: found.name,
      plan: found.plan,
      support_priority: found.support_priority ?? found.plan_priority,
    },
    features: new Set(found.features),
  };
}

/** Agency views need `agency.sites`, enterprise controls `enterprise.controls`, in one of the account's active plans. */
export async function requireAccountFeature(ctx: Ctx, p: AccountPrincipal, feature: string): Promise<void> {
  if (p.features.has(feature)) return;
  const plan = requiredPlan(await listPlans(ctx.db), feature);
  throw new CloudError(
    'entitlement_required',
    `'${feature}' needs an active license on the ${plan ?? 'right'} plan for this account`,
    { required_plan: plan, feature },
  );
}
