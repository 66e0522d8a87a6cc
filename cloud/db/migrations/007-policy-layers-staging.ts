/**
 * Version 7: an account's policy in two layers, and a cap on staging sites.
 *
 * `account_policies` keeps the effective policy in the columns every reader
 * uses (the authentication query among them) and, beside them, the
 * operator's layer and the account's own: the account can only narrow what
 * the operator set (cloud/domain/policy-layers.ts). Rows written before this
 * version cannot tell who set what, so their values become the operator's
 * layer: nothing an account set before is lost, and none of it can be lifted
 * by the account key any more.
 *
 * `licenses.staging_limit`: how many staging sites may use the license
 * (null: as many as its production seats).
 */
export const version = 7;
export const name = 'policy-layers-staging';
export const sql = `
ALTER TABLE account_policies ADD COLUMN operator_layer jsonb NOT NULL DEFAULT '{}';
ALTER TABLE account_policies ADD COLUMN account_layer jsonb NOT NULL DEFAULT '{}';
UPDATE account_policies SET operator_layer = jsonb_build_object('allowed_providers', ai_allowed_providers, 'required_tags', ai_required_tags, 'fallback_order', ai_fallback_order, 'features_off', features_off);
ALTER TABLE licenses ADD COLUMN staging_limit integer CHECK (staging_limit >= 0);
`;
