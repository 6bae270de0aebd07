-- tcc_claim: claims a gateway attempt for each order of a batch (ConfirmClaims, claims.ts): one
-- attempt at a time per order (the lease), only while it holds stock and its reservation has not
-- expired, and for a CONFIRM_PENDING order only once its next step is due. A job (p_jobs) only
-- takes a step that is due: never a TRY_SUCCESS order its client has not asked to confirm. The
-- first attempt fixes the payment token. Orders not claimed come back as they stand (r_body), with
-- the facts the caller decides on; one row per request, in request order (r_idx, 1-based). Two
-- statements: the claims, then the answers, read after them (see below). A claim also records that
-- a charge request may now reach the gateway (payment_sent_at) and says whether it is the first
-- (r_first_send): when the breaker then keeps that very request from leaving, the move that
-- records it clears the mark again (tcc_apply), so an order never sent is never watched for a refund.
--
-- An order whose payment was held at Try is captured, not charged: its payment moves from
-- p_capture_from to p_capturing with the claim, and one whose authorization is unsettled
-- (p_unsettled) is not claimed (Confirm waits for it). Without these (NULL) every order is claimed as
-- a charge.
--
-- Plans pinned (see orders/state/apply-moves.sql). Applied after the migrations, and again
-- whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_claim(p_ids uuid[], p_tokens text[], p_jobs boolean[], p_lease_ms float8, p_holding text[],
                                     p_unsettled text[], p_capture_from text[], p_capturing text)
RETURNS TABLE (r_idx int, r_claimed boolean, r_id uuid, r_status text, r_amount bigint, r_currency text, r_payment_key text,
               r_payment_token text, r_attempts int, r_charge_requested boolean, r_expired boolean, r_leased boolean,
               r_due boolean, r_lease text, r_body text, r_payment_status text, r_payment_id text, r_first_send boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off SET lock_timeout = 500
AS $fn$
DECLARE
  -- The requests that claimed their order (by request position), and the lease each took.
  v_claimed int[];
  v_leases text[];
  v_first_sends boolean[];
BEGIN
  -- The requests, in arrival order; an order asked for twice in one batch is claimed by its first
  -- request only. The claims fix the token (first attempt), record that a charge was requested (a
  -- total of 0 is never charged), take the lease, and push the next step out by as long.
  WITH requests AS (
    SELECT u.id, u.token, u.job, u.ord::int AS ord FROM unnest(p_ids, p_tokens, p_jobs) WITH ORDINALITY u(id, token, job, ord)),
  first_requests AS (SELECT DISTINCT ON (r.id) r.id, r.token, r.job, r.ord FROM requests r ORDER BY r.id, r.ord),
  claimed AS (
    UPDATE orders o
       SET payment_token = CASE WHEN o.payment_requested_at IS NULL AND o.amount_minor > 0 THEN f.token ELSE o.payment_token END,
           payment_requested_at = CASE WHEN o.amount_minor > 0 THEN coalesce(o.payment_requested_at, now()) END,
           payment_sent_at = CASE WHEN o.amount_minor > 0 THEN coalesce(o.payment_sent_at, now()) END,
           lease_until = now() + make_interval(secs => p_lease_ms / 1000),
           next_action_at = now() + make_interval(secs => p_lease_ms / 1000),
           payment_status = CASE WHEN o.payment_status = ANY (p_capture_from) THEN p_capturing ELSE o.payment_status END
      FROM first_requests f
     WHERE o.id = f.id AND o.status = ANY (p_holding) AND o.reservation_expires_at > now()
       AND (o.lease_until IS NULL OR o.lease_until <= now())
       AND (p_unsettled IS NULL OR o.payment_status IS NULL OR o.payment_status <> ALL (p_unsettled))
       AND CASE WHEN f.job THEN o.next_action_at <= now() ELSE (o.next_action_at IS NULL OR o.next_action_at <= now()) END
    -- The mark is this claim's own when it bears this transaction's time (an earlier claim, a
    -- transaction of its own whose lease has ended since, bears an earlier one).
    RETURNING f.ord, o.lease_until::text AS lease, coalesce(o.payment_sent_at = now(), false) AS first_send)
  SELECT array_agg(c.ord), array_agg(c.lease), array_agg(c.first_send) INTO v_claimed, v_leases, v_first_sends FROM claimed c;
  v_claimed := coalesce(v_claimed, '{}');

  -- One row per request: the claim it made, or the order as it stands (its JSON when not
  -- claimed). A statement of its own: a claim that waited for another transaction's lock on its
  -- order (a Cancel, a force-confirm) judged the row as that transaction left it, but the rest of
  -- the claim's statement still saw the snapshot from before the wait. Read here, an order
  -- canceled meanwhile is answered CANCELED, not as it was.
  RETURN QUERY
  SELECT r.ord::int, r.ord::int = ANY (v_claimed), r.id, o.status, o.amount_minor, o.currency::text, o.payment_key, o.payment_token,
         o.confirm_attempts, o.payment_requested_at IS NOT NULL, o.reservation_expires_at <= now(),
         NOT (r.ord::int = ANY (v_claimed)) AND coalesce(o.lease_until > now(), false), coalesce(o.next_action_at <= now(), false),
         v_leases[array_position(v_claimed, r.ord::int)],
         CASE WHEN o.id IS NOT NULL AND NOT (r.ord::int = ANY (v_claimed)) THEN tcc_order_json(o)::text END,
         o.payment_status, o.payment_id,
         coalesce(v_first_sends[array_position(v_claimed, r.ord::int)], false)
    FROM unnest(p_ids) WITH ORDINALITY AS r(id, ord)
    LEFT JOIN orders o ON o.id = r.id
   ORDER BY r.ord;
END
$fn$;
