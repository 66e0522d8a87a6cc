/**
 * Version 8: `mcp.upstreams` is in the free plan (docs/decisions.md: the desk in
 * front of a person's own MCP servers is the product; pro keeps what costs
 * the vendor money: AI, translation, reports).
 *
 * A fresh gateway seeds its plans from DEFAULT_PLAN_FEATURES after the
 * migrations, so this only matters to a gateway that already stored its
 * plans: its `free` row gets the feature added once, keeping whatever else
 * the operator put in it. Other plans are left alone (the defaults already
 * carry it upwards, and an operator who took it out of a paid plan meant it).
 * An account can still be narrowed by the operator's policy (`features_off`).
 */
export const version = 8;
export const name = 'upstreams-free';
export const sql = `
UPDATE plans SET features = features || '["mcp.upstreams"]'::jsonb, updated_at = now() WHERE id = 'free' AND NOT (features @> '["mcp.upstreams"]'::jsonb);
`;
