-- tcc_apply: applies a batch of order moves (OrderStore.apply, order-store.ts; the moves are built
-- in moves.ts from the state machine in order-state.ts). The only writer of orders.status: each
-- move is a compare-and-set from the states the state machine allows into its target (m.from),
-- and, for an attempt's unknown outcome, only by the holder of the attempt's lease. A move with no
-- target ("to" null) leaves the status as it is.
--
-- The payment of an order authorized at Try moves with it, by compare-and-set too: a move may
-- require the payment's state (pay_from) or the authorization attempts made (auth_attempts_before),
-- and maps the payment's state to its next (pay_map; pay_unsent_map, when the move gives one, for an
-- order that never reached the gateway). It records what the gateway held (payment id, authorized and captured amounts, the
-- authorization's expiry — the reservation then ends at least auth_margin_ms before it).
--
-- A move that wins also moves its stock through the barrier (commit or release, at most once per
-- branch): exactly the allocations its order holds, each committed allocation a `sale` movement of
-- the ledger (the move's actor, 'system' unless an operator made it). It records why on the timeline, owes a refund check when a released order may have been
-- charged (a charge request may have reached the gateway: payment_sent_at, which a move recording
-- that the breaker kept the first request from leaving clears again), erases the payment token on a terminal state and writes the outbox. A move that loses
-- changes nothing but its gateway call's event (the call did happen); a charge that lost to a
-- release is owed back (owe_refund_if_lost), and one that lost to an operator's force-confirm
-- flags the order.
--
-- Four statements in the common case: the order rows locked by id; one statement that parses
-- the moves, compare-and-sets the orders, writes their barrier rows and timeline and lists the
-- allocations the winners move; the SKU rows locked in byte order (the guard of their stock rows);
-- one statement that moves the stock rows and writes the sales to the ledger. Released stock may
-- lift a SKU back above its low-stock threshold (tcc_low_stock, only for SKUs flagged low). The
-- follow-ups of a lost race run only when a move lost. One row per move, in move order (r_idx,
-- 1-based).
--
-- A lock held elsewhere for longer than lock_timeout (a stuck session, an operator's open
-- transaction) fails the call rather than holding the process's batches: the caller then applies
-- its moves one by one, so only the ones that need that row wait (common/batcher.ts).
--
-- Plans are pinned for every engine function: generic (made once per session), no sequential
-- scan, no JIT. Every statement here reads through a primary or unique key, and a session may make
-- its plans while a table is still empty (a fresh deployment, or just after VACUUM ANALYZE on an
-- empty schema): the planner then picks sequential scans that stay cached while the table grows,
-- until autovacuum analyzes it. enable_seqscan = off keeps the key lookups; jit = off because
-- disabled scans carry a huge cost estimate, which would otherwise make Postgres compile these
-- small statements to machine code on every call.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_apply(p_moves jsonb, p_terminal text[], p_refund_pending text)
RETURNS TABLE (r_idx int, r_id uuid, r_won boolean, r_status text, r_previous text, r_refund_status text,
               r_next_action_at timestamptz, r_refund_next_at timestamptz, r_attempts int, r_body text, r_flagged boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off SET lock_timeout = 500
AS $fn$
DECLARE
  v_n int := jsonb_array_length(p_moves);
  -- The orders whose move won, and the status each had before it (same order).
  v_won uuid[];
  v_previous text[];
  v_flagged uuid[];
  -- What the winners move, one entry per allocation (in move, line and allocation order): the
  -- order, the SKU and location, the quantity, whether it is sold (else only released), and who
  -- sells it; then the SKUs involved, in byte order.
  v_alloc_order uuid[];
  v_alloc_sku text[];
  v_alloc_location text[];
  v_alloc_quantity int[];
  v_alloc_sold boolean[];
  v_alloc_actor text[];
  v_alloc_operator text[];
  v_skus text[];
  -- The sales to record (tcc_record_movements, the ledger's one writer), in allocation order.
  v_sale_sku text[];
  v_sale_location text[];
  v_sale_delta int[];
  v_sale_on_hand_after int[];
  v_sale_reference text[];
  v_sale_actor text[];
  v_sale_operator text[];
BEGIN
  -- The order rows, locked by id (the lock order every path keeps).
  PERFORM 1 FROM orders o WHERE o.id = ANY (ARRAY(SELECT (e->>'id')::uuid FROM jsonb_array_elements(p_moves) e)) ORDER BY o.id FOR NO KEY UPDATE;

  -- The moves, parsed once, in their order (i).
  WITH moves AS MATERIALIZED (
    SELECT x.*, x.ord::int AS i
      FROM ROWS FROM (jsonb_to_recordset(p_moves) AS (id uuid, "to" text, "from" text[], reason text, data jsonb,
             set_failure boolean, failure_reason text, payment_id text, add_attempts int, next_action_ms float8, force_confirmed boolean,
             refund_watch_ms float8, unsent boolean, lease text, stock text, call_type text, call_data jsonb, notes jsonb, emit text,
             actor text, operator text, next_action_when text[], keep_schedule boolean, pay_from text[], pay_map jsonb, pay_unsent_map jsonb,
             authorized_minor bigint, captured_minor bigint, auth_expires_at timestamptz, auth_margin_ms float8, auth_attempts_before int,
             add_auth_attempts int)) WITH ORDINALITY
        AS x(id, "to", "from", reason, data, set_failure, failure_reason, payment_id, add_attempts, next_action_ms, force_confirmed,
             refund_watch_ms, unsent, lease, stock, call_type, call_data, notes, emit, actor, operator, next_action_when, keep_schedule, pay_from,
             pay_map, pay_unsent_map, authorized_minor, captured_minor, auth_expires_at, auth_margin_ms, auth_attempts_before,
             add_auth_attempts, ord)),
  -- The moves that win the compare-and-set: the order is in an allowed state (and the move holds
  -- the attempt's lease, when it names one). A release owes a refund check when a charge request
  -- may have reached the gateway and the move watches for one (owes_refund_check).
  winning AS (
    SELECT m.*, o.status AS previous, coalesce(m."to", o.status) AS next_status, o.transaction_id, o.items,
           o.payment_status AS pay_previous,
           coalesce(CASE WHEN o.payment_requested_at IS NULL AND m.pay_unsent_map IS NOT NULL THEN m.pay_unsent_map ELSE m.pay_map END ->> o.payment_status, o.payment_status) AS pay_next,
           m.stock = 'release' AND m.refund_watch_ms IS NOT NULL AND o.payment_sent_at IS NOT NULL AS owes_refund_check
      FROM moves m JOIN LATERAL (SELECT o1.status, o1.transaction_id, o1.items, o1.payment_requested_at, o1.payment_sent_at, o1.lease_until,
                                        o1.payment_status, o1.authorize_attempts FROM orders o1 WHERE o1.id = m.id) o ON true
     WHERE o.status = ANY (m."from") AND (m.lease IS NULL OR o.lease_until = m.lease::timestamptz)
       AND (m.pay_from IS NULL OR o.payment_status = ANY (m.pay_from))
       AND (m.auth_attempts_before IS NULL OR o.authorize_attempts = m.auth_attempts_before)),
  -- The winners' new state.
  updated AS (
    UPDATE orders o SET
        status = w.next_status,
        payment_id = coalesce(w.payment_id, o.payment_id),
        failure_reason = CASE WHEN w.set_failure THEN w.failure_reason ELSE o.failure_reason END,
        confirm_attempts = o.confirm_attempts + coalesce(w.add_attempts, 0),
        next_action_at = CASE WHEN w.keep_schedule THEN o.next_action_at
                              WHEN w.next_action_ms IS NOT NULL AND (w.next_action_when IS NULL OR w.next_status = ANY (w.next_action_when))
                              THEN now() + make_interval(secs => w.next_action_ms / 1000) END,
        lease_until = CASE WHEN w.keep_schedule THEN o.lease_until END,
        payment_status = w.pay_next,
        authorized_minor = coalesce(w.authorized_minor, o.authorized_minor),
        captured_minor = coalesce(w.captured_minor, o.captured_minor),
        authorization_expires_at = coalesce(w.auth_expires_at, o.authorization_expires_at),
        authorize_attempts = o.authorize_attempts + coalesce(w.add_auth_attempts, 0),
        reservation_expires_at = CASE WHEN w.auth_expires_at IS NULL THEN o.reservation_expires_at
                                      ELSE least(o.reservation_expires_at, w.auth_expires_at - make_interval(secs => coalesce(w.auth_margin_ms, 0) / 1000)) END,
        force_confirmed = o.force_confirmed OR coalesce(w.force_confirmed, false),
        payment_sent_at = CASE WHEN w.unsent THEN NULL ELSE o.payment_sent_at END,
        payment_token = CASE WHEN w.next_status = ANY (p_terminal) THEN NULL ELSE o.payment_token END,
        refund_status = CASE WHEN w.owes_refund_check THEN p_refund_pending ELSE o.refund_status END,
        refund_check_until = CASE WHEN w.owes_refund_check THEN now() + make_interval(secs => w.refund_watch_ms / 1000) ELSE o.refund_check_until END,
        refund_next_at = CASE WHEN w.owes_refund_check THEN now() ELSE o.refund_next_at END,
        refund_owed_at = CASE WHEN w.owes_refund_check THEN coalesce(o.refund_owed_at, now()) ELSE o.refund_owed_at END,
        updated_at = tcc_order_stamp(o.updated_at)
      FROM winning w WHERE o.id = w.id AND o.id = ANY (ARRAY(SELECT w2.id FROM winning w2))
    RETURNING o.id),
  -- Through the barrier: a branch commits or releases at most once; only the rows it inserted move stock.
  barrier_rows AS (
    INSERT INTO tcc_barrier (transaction_id, op, reason)
    SELECT w.transaction_id, CASE w.stock WHEN 'commit' THEN 'confirm' ELSE 'cancel' END, CASE w.stock WHEN 'commit' THEN 'confirm' ELSE 'cancel' END
      FROM winning w WHERE w.stock IS NOT NULL
    ON CONFLICT (transaction_id, op) DO NOTHING RETURNING transaction_id, op),
  -- The timeline: per order the gateway call (won or not), the status change, the payment's, then
  -- the notes of a winning move, in that order (ids follow the ORDER BY).
  timeline AS (
    INSERT INTO order_events (order_id, type, data)
    SELECT x.id, x.type, x.data FROM (
      SELECT m.id, m.i, 0 AS k, 0::bigint AS n, m.call_type AS type, coalesce(m.call_data, '{}'::jsonb) AS data FROM moves m WHERE m.call_type IS NOT NULL
      UNION ALL
      SELECT w.id, w.i, 1, 0, 'status.changed',
             jsonb_build_object('from', w.previous, 'to', w."to", 'reason', w.reason) || coalesce(nullif(w.data, 'null'::jsonb), '{}'::jsonb)
        FROM winning w WHERE w.previous <> w."to"
      UNION ALL
      SELECT w.id, w.i, 1, 1, 'payment.changed', jsonb_build_object('from', w.pay_previous, 'to', w.pay_next, 'reason', w.reason)
        FROM winning w WHERE w.pay_previous IS DISTINCT FROM w.pay_next
      UNION ALL
      SELECT w.id, w.i, 2, n.ord, n.val->>'type', coalesce(n.val->'data', '{}'::jsonb)
        FROM winning w CROSS JOIN LATERAL jsonb_array_elements(coalesce(nullif(w.notes, 'null'::jsonb), '[]'::jsonb)) WITH ORDINALITY AS n(val, ord)
    ) x ORDER BY x.i, x.k, x.n),
  -- The allocations the barrier lets move: a commit sells them, both free the reservation.
  allocations AS (
    SELECT w.i, w.id, line.item->>'sku' AS sku, a.alloc->>'locationId' AS location_id, (a.alloc->>'quantity')::int AS quantity,
           b.op = 'confirm' AS sold, w.actor, w.operator, line.pos AS line_pos, a.pos AS alloc_pos
      FROM barrier_rows b JOIN winning w ON w.transaction_id = b.transaction_id
      CROSS JOIN LATERAL jsonb_array_elements(w.items) WITH ORDINALITY AS line(item, pos)
      CROSS JOIN LATERAL jsonb_array_elements(line.item->'allocations') WITH ORDINALITY AS a(alloc, pos))
  SELECT (SELECT array_agg(w.id ORDER BY w.i) FROM winning w), (SELECT array_agg(w.previous ORDER BY w.i) FROM winning w),
         (SELECT array_agg(a.id ORDER BY a.i, a.line_pos, a.alloc_pos) FROM allocations a),
         (SELECT array_agg(a.sku ORDER BY a.i, a.line_pos, a.alloc_pos) FROM allocations a),
         (SELECT array_agg(a.location_id ORDER BY a.i, a.line_pos, a.alloc_pos) FROM allocations a),
         (SELECT array_agg(a.quantity ORDER BY a.i, a.line_pos, a.alloc_pos) FROM allocations a),
         (SELECT array_agg(a.sold ORDER BY a.i, a.line_pos, a.alloc_pos) FROM allocations a),
         (SELECT array_agg(a.actor ORDER BY a.i, a.line_pos, a.alloc_pos) FROM allocations a),
         (SELECT array_agg(a.operator ORDER BY a.i, a.line_pos, a.alloc_pos) FROM allocations a)
    INTO v_won, v_previous, v_alloc_order, v_alloc_sku, v_alloc_location, v_alloc_quantity, v_alloc_sold, v_alloc_actor, v_alloc_operator;
  v_won := coalesce(v_won, '{}'); v_previous := coalesce(v_previous, '{}');

  IF v_alloc_sku IS NOT NULL THEN
    -- The SKU rows in byte order (the guard of their stock rows), each found through its primary key.
    SELECT array_agg(DISTINCT u.sku COLLATE "C" ORDER BY u.sku COLLATE "C") INTO v_skus FROM unnest(v_alloc_sku) AS u(sku);
    PERFORM 1 FROM skus s WHERE s.sku = ANY (v_skus) ORDER BY s.sku COLLATE "C" FOR NO KEY UPDATE;
    -- Each stock row by what the winners held there; each sold allocation a movement whose
    -- on_hand_after counts down from the row's on hand before, in allocation order, recorded by
    -- the ledger's writer in the next statement.
    WITH moving AS (
      SELECT u.order_id, u.sku, u.location_id, u.quantity, u.sold, u.actor, u.operator, u.pos,
             sum(CASE WHEN u.sold THEN u.quantity ELSE 0 END) OVER (PARTITION BY u.sku, u.location_id ORDER BY u.pos) AS sold_so_far
        FROM unnest(v_alloc_order, v_alloc_sku, v_alloc_location, v_alloc_quantity, v_alloc_sold, v_alloc_actor, v_alloc_operator)
               WITH ORDINALITY AS u(order_id, sku, location_id, quantity, sold, actor, operator, pos)),
    per_row AS (
      SELECT m.sku, m.location_id, sum(CASE WHEN m.sold THEN m.quantity ELSE 0 END)::int AS sold, sum(m.quantity)::int AS freed
        FROM moving m GROUP BY m.sku, m.location_id),
    moved AS (
      UPDATE stock st SET on_hand = st.on_hand - r.sold, reserved = st.reserved - r.freed, updated_at = now()
        FROM per_row r
       WHERE st.sku = ANY (v_skus) AND st.sku = r.sku AND st.location_id = r.location_id
      RETURNING st.sku, st.location_id, st.on_hand + r.sold AS on_hand_before)
    SELECT array_agg(m.sku ORDER BY m.pos), array_agg(m.location_id ORDER BY m.pos), array_agg(-m.quantity ORDER BY m.pos),
           array_agg(mv.on_hand_before - m.sold_so_far ORDER BY m.pos), array_agg(m.order_id::text ORDER BY m.pos),
           array_agg(coalesce(m.actor, 'system') ORDER BY m.pos), array_agg(m.operator ORDER BY m.pos)
      INTO v_sale_sku, v_sale_location, v_sale_delta, v_sale_on_hand_after, v_sale_reference, v_sale_actor, v_sale_operator
      FROM moving m JOIN moved mv ON mv.sku = m.sku AND mv.location_id = m.location_id
     WHERE m.sold;
    IF v_sale_sku IS NOT NULL THEN
      PERFORM 1 FROM tcc_record_movements('sale', v_sale_sku, v_sale_location, v_sale_delta, v_sale_on_hand_after,
                                          v_sale_reference, v_sale_actor, v_sale_operator, NULL, NULL, NULL);
    END IF;
    -- Released stock may lift a SKU back above its low-stock threshold.
    IF EXISTS (SELECT 1 FROM skus s WHERE s.sku = ANY (v_skus) AND s.low_stock) THEN
      PERFORM tcc_low_stock(v_skus);
    END IF;
  END IF;

  IF cardinality(v_won) < v_n THEN
    -- A charge (or an authorization) that lost to a release — the order ended, and not confirmed:
    -- the stock is gone, so the money goes back. Never on a confirmed order: a paid order is never
    -- refunded. A charge that lost there lost to a force-confirm (flagged below); an authorization
    -- applied late there (its step's lease ran out and another process settled the same payment,
    -- which was then captured) is the sale's own money.
    WITH moves AS (SELECT * FROM jsonb_to_recordset(p_moves) AS x(id uuid, owe_refund_if_lost boolean, refund_watch_ms float8, reason text)),
    owed AS (
      UPDATE orders o SET refund_status = p_refund_pending, refund_next_at = now(),
             refund_check_until = greatest(coalesce(o.refund_check_until, now()), now() + make_interval(secs => m.refund_watch_ms / 1000)),
             refund_owed_at = coalesce(o.refund_owed_at, now()), updated_at = tcc_order_stamp(o.updated_at)
        FROM moves m
       WHERE o.id = m.id AND o.id = ANY (ARRAY(SELECT m2.id FROM moves m2)) AND m.owe_refund_if_lost AND NOT (m.id = ANY (v_won))
         AND o.status = ANY (p_terminal) AND o.status <> 'CONFIRM_SUCCESS'
      RETURNING o.id, o.status, m.reason)
    INSERT INTO order_events (order_id, type, data)
    SELECT owed.id, 'refund.owed', jsonb_build_object('reason', owed.reason || ' after the order became ' || owed.status) FROM owed;

    -- A charge that lost to an operator's force-confirm: paid twice over, a human must look.
    -- r_flagged tells the caller which orders this call flagged (for its counter and alert line).
    WITH flags AS MATERIALIZED (
      SELECT o.id, tcc_flag_attention(o.id, 'capture_on_force_confirmed', jsonb_build_object('paymentId', m.payment_id)) AS flagged
        FROM jsonb_to_recordset(p_moves) AS m(id uuid, "to" text, payment_id text)
        CROSS JOIN LATERAL (SELECT o1.id, o1.status, o1.force_confirmed FROM orders o1 WHERE o1.id = m.id) o
       WHERE m.payment_id IS NOT NULL AND NOT (m.id = ANY (v_won)) AND o.status = m."to" AND o.force_confirmed)
    SELECT array_agg(f.id) INTO v_flagged FROM flags f WHERE f.flagged;
  END IF;

  -- The outbox (tcc_emit, webhooks/outbox.sql): one call per event type, for the winners whose status changed.
  IF cardinality(v_won) > 0 AND EXISTS (SELECT 1 FROM webhooks) THEN
    PERFORM tcc_emit(e.emit, e.ids)
       FROM (SELECT m.emit, array_agg(m.id) AS ids
               FROM jsonb_to_recordset(p_moves) AS m(id uuid, "to" text, emit text)
               JOIN unnest(v_won, v_previous) AS w(id, previous) ON w.id = m.id
              WHERE m.emit IS NOT NULL AND w.previous <> m."to" GROUP BY m.emit) e;
  END IF;

  -- One row per move: whether it won, and the order as it now stands.
  RETURN QUERY
    SELECT m.i, m.id, coalesce(m.id = ANY (v_won), false), o.status, v_previous[array_position(v_won, m.id)], o.refund_status,
           o.next_action_at, o.refund_next_at, o.confirm_attempts, tcc_order_json(o)::text, coalesce(m.id = ANY (v_flagged), false)
      FROM (SELECT (e.val->>'id')::uuid AS id, e.ord::int AS i FROM jsonb_array_elements(p_moves) WITH ORDINALITY AS e(val, ord)) m
      LEFT JOIN LATERAL (SELECT * FROM orders o1 WHERE o1.id = m.id) o ON true
     ORDER BY m.i;
END
$fn$;
