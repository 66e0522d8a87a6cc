/**
 * Version 2: the database side of every signed request as one PL/pgSQL
 * function, so a request costs one round trip before its route runs.
 * gatehouse_authenticate reads the site with its license, plan and
 * switched-off products, and claims the request's nonce in the same call
 * (only for a known, connected site). PL/pgSQL keeps the plans of its
 * statements per connection: no re-planning on each request (three times
 * faster on PGlite, where planning runs in WebAssembly).
 */
export const version = 2;
export const name = 'hot-path-functions';
export const sql = `
CREATE FUNCTION gatehouse_authenticate(p_key_id text, p_nonce text, p_expires timestamptz, p_now timestamptz)
RETURNS TABLE (
  id text, key_id text, secret_enc text, url text, name text, environment text, status text,
  license_id text, account_id text, department text, project text, version text, products_in_use jsonb,
  outbox_depth integer, last_sync_at timestamptz, created_at timestamptz, disconnected_at timestamptz,
  l_id text, l_key_hash text, l_key_preview text, l_account_id text, l_plan_id text, l_site_limit integer,
  l_status text, l_expires_at timestamptz, l_created_at timestamptz, l_revoked_at timestamptz,
  p_id text, p_rank integer, p_features jsonb, p_products jsonb, p_site_limit integer, p_limits jsonb,
  p_update_channels jsonb, off text[], nonce_fresh boolean
)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  claimed boolean := false;
BEGIN
  IF EXISTS (SELECT 1 FROM sites s WHERE s.key_id = p_key_id AND s.status = 'active') THEN
    INSERT INTO request_nonces AS n (key_id, nonce, expires_at) VALUES (p_key_id, p_nonce, p_expires)
    ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE n.expires_at <= p_now;
    claimed := FOUND;
  END IF;
  RETURN QUERY
    SELECT s.id, s.key_id, s.secret_enc, s.url, s.name, s.environment, s.status,
           s.license_id, s.account_id, s.department, s.project, s.version, s.products_in_use,
           s.outbox_depth, s.last_sync_at, s.created_at, s.disconnected_at,
           l.id, l.key_hash, l.key_preview, l.account_id, l.plan_id, l.site_limit,
           l.status, l.expires_at, l.created_at, l.revoked_at,
           p.id, p.rank, p.features, p.products, p.site_limit, p.limits, p.update_channels,
           ARRAY(SELECT ps.product FROM product_switches ps
                  WHERE ps.enabled = false
                    AND ((ps.scope = 'site' AND ps.subject = s.id) OR (ps.scope = 'account' AND ps.subject = s.account_id))),
           claimed
      FROM sites s
      LEFT JOIN licenses l ON l.id = s.license_id
      LEFT JOIN plans p ON p.id = l.plan_id
     WHERE s.key_id = p_key_id;
END
$fn$;
`;
