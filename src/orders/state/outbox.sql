-- tcc_emit: the webhook outbox writer. The order engine calls it inside the transaction of the
-- change it reports (tcc_try_batch, tcc_apply, tcc_flag_attention, the refund statements), so an
-- event is never lost to a crash or to Redis, and never sent for a change that rolled back. It
-- writes one pending delivery per endpoint subscribed to p_type, carrying the orders as they are
-- now; nothing while nobody listens. The poller (webhooks/webhook-poller.ts) sends what it writes.
-- It sits with the order JSON it writes (tcc_order_json), below every caller, not in webhooks/: SQL
-- keeps the layering too (src/database/sql-graph.ts).
--
-- The endpoints are locked FOR KEY SHARE, as each delivery's foreign key would lock its endpoint:
-- an endpoint deleted while this waited is skipped (a statement that locks rows re-reads what it
-- locked), and one deleted later waits for this transaction. Read without the lock, an endpoint
-- deleted meanwhile made the deliveries' foreign key fail, and with it the whole batch of orders.
--
-- Plans pinned like the engine's (see orders/state/apply-moves.sql): generic, no sequential scan, no JIT.
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_emit(p_type text, p_ids uuid[]) RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off
AS $fn$
BEGIN
  -- Nothing to report, or nobody subscribed to this event type.
  IF p_ids IS NULL OR cardinality(p_ids) = 0 OR NOT EXISTS (SELECT 1 FROM webhooks WHERE p_type = ANY (events)) THEN
    RETURN;
  END IF;
  -- One id per event, the same for every endpoint that receives it: the events are made once
  -- (MATERIALIZED), then fanned out to the subscribed endpoints.
  WITH new_events AS MATERIALIZED (
    SELECT gen_random_uuid() AS id, o.id AS order_id,
           json_build_object('type', p_type, 'timestamp', tcc_iso(clock_timestamp()),
                             'data', json_build_object('order', tcc_order_json(o)))::text AS payload
      FROM orders o WHERE o.id = ANY (p_ids)),
  subscribers AS MATERIALIZED (
    SELECT w.name FROM webhooks w WHERE p_type = ANY (w.events) ORDER BY w.name FOR KEY SHARE)
  INSERT INTO webhook_deliveries (id, webhook_name, type, order_id, payload, next_attempt_at)
  SELECT e.id, s.name, p_type, e.order_id, e.payload, now()
    FROM new_events e CROSS JOIN subscribers s;
END
$fn$;
