/**
 * Version 6: one lock order for the ledger, rollups, fewer round trips.
 *
 * Every statement that touches usage counters and reservations locks rows in
 * one order: the request's nonce, its Idempotency-Key, the counters (sorted by
 * gatehouse_counter_key, COLLATE "C"), the reservation, the events, the
 * rollups (sorted). Before this, usage/record locked limited counters before
 * free ones and event by event, gatehouse_settle the reservation before the
 * counters and the sweeper one reservation's counters after another's: two
 * instances charging one counter deadlocked.
 *
 * usage_rollups: per site, UTC day, metric, product and feature, the amount
 * and the number of events, kept by a statement trigger on usage_events (so
 * in the same transaction as the events, whoever inserts them); summary and
 * history read them instead of the events. metric '' counts every event.
 *
 * gatehouse_record is usage/record in one call; gatehouse_hold can claim the
 * request's nonce (ai/generate: authentication and the hold in one commit);
 * gatehouse_authenticate may leave the nonce to the route (p_claim false) or
 * claim it without waiting for a durable commit (p_durable false: read-only
 * routes, see docs/decisions.md).
 *
 * provider_overshoots: every settlement whose provider reported more than
 * it was allowed (the operator's providers list shows them).
 */
export const version = 6;
export const name = 'one-lock-order';
export const sql = `
CREATE TABLE usage_rollups (
  site_id text NOT NULL,
  bucket timestamptz NOT NULL,
  metric text NOT NULL,
  product text NOT NULL,
  feature text NOT NULL,
  amount bigint NOT NULL DEFAULT 0,
  events bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (site_id, bucket, metric, product, feature)
);

CREATE FUNCTION gatehouse_rollup_events() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO usage_rollups AS r (site_id, bucket, metric, product, feature, amount, events)
  SELECT n.site_id, date_trunc('day', n.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', m.metric, n.product, n.feature, sum(m.amount), count(*)
    FROM new_events n
    CROSS JOIN LATERAL (VALUES ('', 0::bigint), (n.units_metric, n.units), ('ai_tokens', n.tokens_input + n.tokens_output)) AS m(metric, amount)
   WHERE m.metric = '' OR (m.metric IS NOT NULL AND m.amount > 0)
   GROUP BY 1, 2, 3, 4, 5
   ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (site_id, bucket, metric, product, feature) DO UPDATE SET amount = r.amount + EXCLUDED.amount, events = r.events + EXCLUDED.events;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER usage_events_rollup AFTER INSERT ON usage_events REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_rollup_events();

INSERT INTO usage_rollups (site_id, bucket, metric, product, feature, amount, events)
SELECT e.site_id, date_trunc('day', e.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', m.metric, e.product, e.feature, sum(m.amount), count(*)
  FROM usage_events e
  CROSS JOIN LATERAL (VALUES ('', 0::bigint), (e.units_metric, e.units), ('ai_tokens', e.tokens_input + e.tokens_output)) AS m(metric, amount)
 WHERE m.metric = '' OR (m.metric IS NOT NULL AND m.amount > 0)
 GROUP BY 1, 2, 3, 4, 5;

CREATE TABLE provider_overshoots (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL,
  provider text NOT NULL,
  site_id text NOT NULL,
  reservation_id text NOT NULL,
  allowed_output bigint NOT NULL,
  reported_output bigint NOT NULL,
  held bigint NOT NULL,
  reported_total bigint NOT NULL
);
CREATE INDEX provider_overshoots_provider ON provider_overshoots (provider, at);

-- The sort key of a counter: every locker orders by it (COLLATE "C": the same order on every server).
CREATE FUNCTION gatehouse_counter_key(d jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT concat_ws('|', d->>'scope', d->>'subject', d->>'metric', d->>'period', d->>'period_start')
$fn$;

-- The distinct counters of p_deltas in the one order every locker takes them in.
CREATE FUNCTION gatehouse_counters_in_order(p_deltas jsonb) RETURNS TABLE (k text, d jsonb) LANGUAGE sql IMMUTABLE AS $fn$
  SELECT DISTINCT ON (gatehouse_counter_key(value) COLLATE "C") gatehouse_counter_key(value), value
    FROM jsonb_array_elements(p_deltas)
   ORDER BY gatehouse_counter_key(value) COLLATE "C"
$fn$;

-- Locks every counter of p_deltas (creating missing ones), in the one order, and answers each one's
-- used + reserved by its key: the caller then decides with the rows held.
CREATE FUNCTION gatehouse_lock_counters(p_deltas jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  d jsonb;
  k text;
  v bigint;
  s jsonb := '{}'::jsonb;
BEGIN
  FOR k, d IN SELECT * FROM gatehouse_counters_in_order(p_deltas) LOOP
    LOOP
      SELECT c.used + c.reserved INTO v FROM usage_counters c
       WHERE c.scope = d->>'scope' AND c.subject = d->>'subject' AND c.metric = d->>'metric' AND c.period = d->>'period' AND c.period_start = (d->>'period_start')::timestamptz
         FOR UPDATE;
      EXIT WHEN FOUND;
      -- A new counter: whoever inserts it first holds it; the others wait here, then find and lock it.
      INSERT INTO usage_counters (scope, subject, metric, period, period_start)
      VALUES (d->>'scope', d->>'subject', d->>'metric', d->>'period', (d->>'period_start')::timestamptz) ON CONFLICT DO NOTHING;
    END LOOP;
    s := s || jsonb_build_object(k, v);
  END LOOP;
  RETURN s;
END
$fn$;

-- Moves counters already locked by this transaction: p_add maps a counter key to {used, reserved} deltas
-- (floored at 0), p_deltas names the counters (any entry per key).
CREATE FUNCTION gatehouse_move_counters(p_deltas jsonb, p_add jsonb) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  d jsonb;
  k text;
BEGIN
  FOR k, d IN SELECT * FROM gatehouse_counters_in_order(p_deltas) LOOP
    CONTINUE WHEN NOT p_add ? k;
    UPDATE usage_counters c
       SET used = GREATEST(c.used + COALESCE((p_add->k->>'used')::bigint, 0), 0),
           reserved = GREATEST(c.reserved + COALESCE((p_add->k->>'reserved')::bigint, 0), 0)
     WHERE c.scope = d->>'scope' AND c.subject = d->>'subject' AND c.metric = d->>'metric' AND c.period = d->>'period' AND c.period_start = (d->>'period_start')::timestamptz;
  END LOOP;
END
$fn$;

-- Claims a request's nonce for its key: false when it was seen within its window (a replay).
CREATE FUNCTION gatehouse_claim_nonce(p_key_id text, p_nonce text, p_expires timestamptz, p_now timestamptz) RETURNS boolean LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO request_nonces AS n (key_id, nonce, expires_at) VALUES (p_key_id, p_nonce, p_expires)
  ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE n.expires_at <= p_now;
  RETURN FOUND;
END
$fn$;

DROP FUNCTION gatehouse_authenticate(text, text, timestamptz, timestamptz);
CREATE FUNCTION gatehouse_authenticate(p_key_id text, p_nonce text, p_expires timestamptz, p_now timestamptz, p_claim boolean, p_durable boolean)
RETURNS TABLE (
  id text, key_id text, secret_enc text, url text, name text, environment text, status text,
  license_id text, account_id text, department text, project text, version text, products_in_use jsonb,
  outbox_depth integer, last_sync_at timestamptz, created_at timestamptz,
  l_id text, l_key_preview text, l_account_id text, l_plan_id text, l_site_limit integer, l_status text, l_expires_at timestamptz,
  off text[], a_features_off jsonb, a_support_priority text, config jsonb, nonce_fresh boolean
)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  claimed boolean := false;
BEGIN
  IF p_claim AND EXISTS (SELECT 1 FROM sites s WHERE s.key_id = p_key_id AND s.status = 'active') THEN
    IF NOT p_durable THEN
      PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    claimed := gatehouse_claim_nonce(p_key_id, p_nonce, p_expires, p_now);
  END IF;
  RETURN QUERY
    SELECT s.id, s.key_id, s.secret_enc, s.url, s.name, s.environment, s.status,
           s.license_id, s.account_id, s.department, s.project, s.version, s.products_in_use,
           s.outbox_depth, s.last_sync_at, s.created_at,
           l.id, l.key_preview, l.account_id, l.plan_id, l.site_limit, l.status, l.expires_at,
           ARRAY(SELECT ps.product FROM product_switches ps
                  WHERE ps.enabled = false
                    AND ((ps.scope = 'site' AND ps.subject = s.id) OR (ps.scope = 'account' AND ps.subject = s.account_id))),
           ap.features_off, ap.support_priority,
           (SELECT jsonb_object_agg(v.name, v.version) FROM config_versions v),
           claimed
      FROM sites s
      LEFT JOIN licenses l ON l.id = s.license_id
      LEFT JOIN account_policies ap ON ap.account_id = s.account_id
     WHERE s.key_id = p_key_id;
END
$fn$;

-- Holds p_amount on every counter of p_deltas, each within its 'limit', and records the reservation.
-- With p_nonce, claims the request's nonce first (GH002 when it is a replay). A counter without room
-- raises GH001 with its index in p_deltas as DETAIL: the whole call rolls back, the nonce claim too.
DROP FUNCTION gatehouse_hold(text, text, text, bigint, jsonb, timestamptz, timestamptz);
CREATE FUNCTION gatehouse_hold(p_id text, p_site text, p_metric text, p_amount bigint, p_deltas jsonb, p_expires timestamptz, p_now timestamptz,
                               p_key_id text, p_nonce text, p_nonce_expires timestamptz)
RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  d jsonb;
  i integer;
  s jsonb;
  add jsonb := '{}'::jsonb;
BEGIN
  IF p_nonce IS NOT NULL AND NOT gatehouse_claim_nonce(p_key_id, p_nonce, p_nonce_expires, p_now) THEN
    RAISE EXCEPTION 'replay' USING ERRCODE = 'GH002';
  END IF;
  s := gatehouse_lock_counters(p_deltas);
  FOR d, i IN SELECT value, (ordinality - 1)::integer FROM jsonb_array_elements(p_deltas) WITH ORDINALITY LOOP
    IF d->>'limit' IS NOT NULL AND (s->>gatehouse_counter_key(d))::bigint + p_amount > (d->>'limit')::bigint THEN
      RAISE EXCEPTION 'quota' USING ERRCODE = 'GH001', DETAIL = i::text;
    END IF;
    add := add || jsonb_build_object(gatehouse_counter_key(d), jsonb_build_object('reserved', p_amount));
  END LOOP;
  PERFORM gatehouse_move_counters(p_deltas, add);
  INSERT INTO usage_reservations (id, site_id, metric, amount, counters, status, expires_at, created_at)
  VALUES (p_id, p_site, p_metric, p_amount,
          (SELECT COALESCE(jsonb_agg(v - 'limit'), '[]'::jsonb) FROM jsonb_array_elements(p_deltas) v), 'held', p_expires, p_now);
END
$fn$;

-- Settles a hold with the usage event of what was actually used, exactly once: counters locked first,
-- then the hold leaves them (when it was still held), the event is inserted (its primary key makes a
-- repeat a no-op) and, when new, counted. p_deltas: every counter touched, with 'reserved' (to take off)
-- and 'used' (to add: the caller caps it at the hold). p_overshoot, when the provider reported more than it
-- was allowed, is kept for the operator with the event. Answers 'settled', 'late' (the sweeper had
-- released the hold: the event is recorded anyway) or 'none'.
DROP FUNCTION gatehouse_settle(text, text, jsonb, jsonb, timestamptz);
CREATE FUNCTION gatehouse_settle(p_id text, p_site text, p_event jsonb, p_deltas jsonb, p_now timestamptz, p_overshoot jsonb)
RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  d jsonb;
  held boolean;
  counted boolean;
  add jsonb := '{}'::jsonb;
BEGIN
  PERFORM gatehouse_lock_counters(p_deltas);
  UPDATE usage_reservations SET status = 'settled', closed_at = p_now WHERE id = p_id AND site_id = p_site AND status = 'held';
  held := FOUND;
  IF NOT held THEN
    UPDATE usage_reservations SET status = 'settled', closed_at = p_now WHERE id = p_id AND site_id = p_site AND status = 'released';
    IF NOT FOUND THEN
      RETURN 'none';
    END IF;
  END IF;
  INSERT INTO usage_events (site_id, event_id, event, product, feature, model, units, tokens_input, tokens_output, units_metric, occurred_at, received_at)
  VALUES (p_site, p_event->>'event_id', p_event->>'event', p_event->>'product', p_event->>'feature', p_event->>'model', (p_event->>'units')::bigint,
          (p_event->>'tokens_input')::bigint, (p_event->>'tokens_output')::bigint, p_event->>'units_metric', (p_event->>'timestamp')::timestamptz, p_now)
  ON CONFLICT (site_id, event_id) DO NOTHING;
  counted := FOUND;
  IF counted AND p_overshoot IS NOT NULL THEN
    INSERT INTO provider_overshoots (at, provider, site_id, reservation_id, allowed_output, reported_output, held, reported_total)
    VALUES (p_now, p_overshoot->>'provider', p_site, p_id, (p_overshoot->>'allowed_output')::bigint, (p_overshoot->>'reported_output')::bigint,
            (p_overshoot->>'held')::bigint, (p_overshoot->>'reported_total')::bigint);
  END IF;
  FOR d IN SELECT value FROM jsonb_array_elements(p_deltas) LOOP
    add := add || jsonb_build_object(gatehouse_counter_key(d), jsonb_build_object(
      'used', CASE WHEN counted THEN (d->>'used')::bigint ELSE 0 END,
      'reserved', CASE WHEN held THEN -(d->>'reserved')::bigint ELSE 0 END));
  END LOOP;
  PERFORM gatehouse_move_counters(p_deltas, add);
  RETURN CASE WHEN held THEN 'settled' ELSE 'late' END;
END
$fn$;

-- Gives a held reservation back (the work failed, or its time ran out): counters first, then the
-- reservation. False when it was not held any more (settled or released by another instance).
CREATE FUNCTION gatehouse_release(p_id text, p_now timestamptz) RETURNS boolean LANGUAGE plpgsql AS $fn$
DECLARE
  r record;
  d jsonb;
  add jsonb := '{}'::jsonb;
BEGIN
  SELECT counters, amount INTO r FROM usage_reservations WHERE id = p_id AND status = 'held';
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM gatehouse_lock_counters(r.counters);
  UPDATE usage_reservations SET status = 'released', closed_at = p_now WHERE id = p_id AND status = 'held';
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  FOR d IN SELECT value FROM jsonb_array_elements(r.counters) LOOP
    add := add || jsonb_build_object(gatehouse_counter_key(d), jsonb_build_object('reserved', -r.amount));
  END LOOP;
  PERFORM gatehouse_move_counters(r.counters, add);
  RETURN true;
END
$fn$;

-- usage/record in one call. p_results: the answer's results in request order, null where an event is to be
-- decided here; p_events: those events, each {i (its index), e (the event, with units_metric), deltas
-- [{scope, subject, metric, period, period_start, amount, limit, reset_at}]}. Claims the nonce (GH002 on a
-- replay) and the Idempotency-Key (a used key answers {prior: {body_hash, answer}}), locks the counters, then
-- accepts events in request order while each fits every limit (an event stored already is a duplicate),
-- inserts the accepted ones and moves the counters: in statements over the whole batch (never one per event)
-- when every new event fits with all before it counted, else by the per-event walk (a limit is reached, so some
-- are refused; the walk's answers are the same). The answer is stored with the key, except when p_single
-- and the event was refused: then {refused: quota} and the key is left free.
CREATE FUNCTION gatehouse_record(p_site text, p_key text, p_body_hash text, p_results jsonb, p_events jsonb, p_single boolean, p_now timestamptz,
                                 p_key_id text, p_nonce text, p_nonce_expires timestamptz)
RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  prior record;
  s jsonb;
  all_deltas jsonb;
  existing text[];
  x jsonb;
  d jsonb;
  k text;
  fits boolean;
  over jsonb;
  pending jsonb := '{}'::jsonb;
  accepted jsonb := '[]'::jsonb;
  taken text[] := '{}';
  inserted text[];
  add jsonb := '{}'::jsonb;
  results jsonb := p_results;
  quota jsonb;
  v_answer jsonb;
BEGIN
  IF p_nonce IS NOT NULL AND NOT gatehouse_claim_nonce(p_key_id, p_nonce, p_nonce_expires, p_now) THEN
    RAISE EXCEPTION 'replay' USING ERRCODE = 'GH002';
  END IF;
  INSERT INTO idempotency_keys (site_id, key, body_hash, created_at) VALUES (p_site, p_key, p_body_hash, p_now) ON CONFLICT (site_id, key) DO NOTHING;
  IF NOT FOUND THEN
    SELECT body_hash, answer INTO prior FROM idempotency_keys WHERE site_id = p_site AND key = p_key;
    RETURN jsonb_build_object('prior', jsonb_build_object('body_hash', prior.body_hash, 'answer', prior.answer));
  END IF;
  -- Each counter once (in the one order): a batch names the same few counters on every event.
  SELECT COALESCE(jsonb_agg(c.cd ORDER BY c.ck COLLATE "C"), '[]'::jsonb) INTO all_deltas
    FROM (SELECT DISTINCT ON (gatehouse_counter_key(dd) COLLATE "C") gatehouse_counter_key(dd) AS ck, dd AS cd
            FROM jsonb_array_elements(p_events) ev, jsonb_array_elements(ev->'deltas') dd) c;
  s := gatehouse_lock_counters(all_deltas);
  SELECT COALESCE(array_agg(u.event_id), '{}') INTO existing FROM usage_events u
   WHERE u.site_id = p_site AND u.event_id IN (SELECT ev->'e'->>'event_id' FROM jsonb_array_elements(p_events) ev);
  -- Set-based when every new event fits every limit even with all the events before it counted (the usual
  -- case, and then the walk below would accept them all): the same decisions without a statement per event.
  -- Only limited deltas are summed: a counter's limit is the same on each of its deltas (one per scope, subject, metric, period).
  SELECT NOT EXISTS (
           SELECT 1 FROM (
             SELECT u.lim, (s->>u.ck)::bigint + sum(u.amt) OVER (PARTITION BY u.ck ORDER BY u.ei) AS total
               FROM (SELECT gatehouse_counter_key(dl) AS ck, dl->>'limit' AS lim, (dl->>'amount')::bigint AS amt, (ev->>'i')::integer AS ei
                       FROM jsonb_array_elements(p_events) ev, jsonb_array_elements(ev->'deltas') dl
                      WHERE dl->>'limit' IS NOT NULL AND NOT (ev->'e'->>'event_id') = ANY(existing)) u) t
            WHERE t.lim IS NOT NULL AND t.total > t.lim::bigint)
     AND (SELECT count(DISTINCT ev->'e'->>'event_id') = count(*) FROM jsonb_array_elements(p_events) ev)
    INTO fits;
  IF fits THEN
    SELECT COALESCE(jsonb_agg(ev ORDER BY (ev->>'i')::integer), '[]'::jsonb) INTO accepted
      FROM jsonb_array_elements(p_events) ev WHERE NOT (ev->'e'->>'event_id') = ANY(existing);
  ELSE
    FOR x IN SELECT value FROM jsonb_array_elements(p_events) ORDER BY (value->>'i')::integer LOOP
      IF (x->'e'->>'event_id') = ANY(existing) OR (x->'e'->>'event_id') = ANY(taken) THEN
        results := jsonb_set(results, ARRAY[x->>'i'], jsonb_build_object('event_id', x->'e'->>'event_id', 'status', 'duplicate'));
        CONTINUE;
      END IF;
      fits := true;
      FOR d IN SELECT value FROM jsonb_array_elements(x->'deltas') LOOP
        k := gatehouse_counter_key(d);
        IF d->>'limit' IS NOT NULL AND (s->>k)::bigint + COALESCE((pending->>k)::bigint, 0) + (d->>'amount')::bigint > (d->>'limit')::bigint THEN
          fits := false;
          over := d;
          EXIT;
        END IF;
      END LOOP;
      IF NOT fits THEN
        quota := jsonb_build_object('scope', over->'scope', 'subject', over->'subject', 'metric', over->'metric', 'period', over->'period',
                                    'limit', (over->>'limit')::bigint, 'used', (s->>gatehouse_counter_key(over))::bigint + COALESCE((pending->>gatehouse_counter_key(over))::bigint, 0),
                                    'reset_at', over->'reset_at');
        IF p_single THEN
          DELETE FROM idempotency_keys WHERE site_id = p_site AND key = p_key;
          RETURN jsonb_build_object('refused', quota);
        END IF;
        results := jsonb_set(results, ARRAY[x->>'i'], jsonb_build_object('event_id', x->'e'->>'event_id', 'status', 'rejected', 'reason', 'quota_exceeded',
          'message', format('the %s %s limit of the %s is reached', CASE over->>'period' WHEN 'day' THEN 'daily' ELSE 'monthly' END, over->>'metric', over->>'scope'),
          'quota', quota));
        CONTINUE;
      END IF;
      FOR d IN SELECT value FROM jsonb_array_elements(x->'deltas') LOOP
        k := gatehouse_counter_key(d);
        pending := pending || jsonb_build_object(k, COALESCE((pending->>k)::bigint, 0) + (d->>'amount')::bigint);
      END LOOP;
      taken := taken || (x->'e'->>'event_id');
      accepted := accepted || jsonb_build_array(x);
    END LOOP;
  END IF;

  WITH ins AS (
    INSERT INTO usage_events (site_id, event_id, event, product, feature, model, units, tokens_input, tokens_output, units_metric, occurred_at, received_at)
    SELECT p_site, a->'e'->>'event_id', a->'e'->>'event', a->'e'->>'product', a->'e'->>'feature', a->'e'->>'model', (a->'e'->>'units')::bigint,
           (a->'e'->>'tokens_input')::bigint, (a->'e'->>'tokens_output')::bigint, a->'e'->>'units_metric', (a->'e'->>'occurred_at')::timestamptz, p_now
      FROM jsonb_array_elements(accepted) a
     ORDER BY a->'e'->>'event_id' COLLATE "C"
    ON CONFLICT (site_id, event_id) DO NOTHING
    RETURNING event_id
  )
  SELECT COALESCE(array_agg(event_id), '{}') INTO inserted FROM ins;

  -- An accepted event not inserted was stored by another request between our read and our insert (an event
  -- that moves no counter): a duplicate. Events stored before are duplicates too (the walk marked them already).
  SELECT COALESCE(jsonb_agg(CASE WHEN a.ax IS NOT NULL AND (a.ax->'e'->>'event_id') = ANY(inserted) THEN jsonb_build_object('event_id', a.ax->'e'->>'event_id', 'status', 'accepted')
                                 WHEN a.ax IS NOT NULL OR (ev.evx->'e'->>'event_id') = ANY(existing) THEN jsonb_build_object('event_id', ev.evx->'e'->>'event_id', 'status', 'duplicate')
                                 ELSE r.rv END ORDER BY r.rn), '[]'::jsonb)
    INTO results
    FROM jsonb_array_elements(results) WITH ORDINALITY r(rv, rn)
    LEFT JOIN jsonb_array_elements(p_events) ev(evx) ON (ev.evx->>'i')::bigint = r.rn - 1
    LEFT JOIN jsonb_array_elements(accepted) a(ax) ON (a.ax->>'i')::bigint = r.rn - 1;
  SELECT COALESCE(jsonb_object_agg(t.tk, jsonb_build_object('used', t.used)), '{}'::jsonb) INTO add
    FROM (SELECT gatehouse_counter_key(dl) AS tk, sum((dl->>'amount')::bigint) AS used
            FROM jsonb_array_elements(accepted) a(ax), jsonb_array_elements(a.ax->'deltas') dl
           WHERE (a.ax->'e'->>'event_id') = ANY(inserted)
           GROUP BY 1) t;
  PERFORM gatehouse_move_counters(all_deltas, add);

  v_answer := jsonb_build_object('success', true, 'results', results,
    'accepted', (SELECT count(*) FROM jsonb_array_elements(results) r WHERE r->>'status' = 'accepted'),
    'duplicate', (SELECT count(*) FROM jsonb_array_elements(results) r WHERE r->>'status' = 'duplicate'),
    'rejected', (SELECT count(*) FROM jsonb_array_elements(results) r WHERE r->>'status' = 'rejected'));
  UPDATE idempotency_keys SET status = 200, answer = v_answer WHERE site_id = p_site AND key = p_key;
  RETURN jsonb_build_object('answer', v_answer);
END
$fn$;
`;
