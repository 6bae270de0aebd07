-- tcc_emit_inventory: the webhook outbox writer for inventory events (inventory.low_stock), the
-- twin of tcc_emit (orders/state/outbox.sql) for SKUs instead of orders: one pending delivery per
-- endpoint subscribed to p_type, carrying each SKU's inventory JSON as it is now (inside the
-- transaction that changed it; tcc_low_stock calls it); nothing while nobody listens. Endpoints are
-- locked FOR KEY SHARE, as tcc_emit does, so one deleted meanwhile is skipped rather than an error.
-- It sits with the stock it reports (tcc_inventory_json), below its caller, not in webhooks/: SQL
-- keeps the layering too (src/database/sql-graph.ts); webhooks/ sends what it writes.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_emit_inventory(p_type text, p_skus text[]) RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off
AS $fn$
BEGIN
  IF p_skus IS NULL OR cardinality(p_skus) = 0 OR NOT EXISTS (SELECT 1 FROM webhooks WHERE p_type = ANY (events)) THEN
    RETURN;
  END IF;
  WITH new_events AS MATERIALIZED (
    SELECT gen_random_uuid() AS id, s.sku,
           json_build_object('type', p_type, 'timestamp', tcc_iso(clock_timestamp()),
                             'data', json_build_object('inventory', tcc_inventory_json(s.sku)))::text AS payload
      FROM unnest(p_skus) AS s(sku)),
  subscribers AS MATERIALIZED (
    SELECT w.name FROM webhooks w WHERE p_type = ANY (w.events) ORDER BY w.name FOR KEY SHARE)
  INSERT INTO webhook_deliveries (id, webhook_name, type, sku, payload, next_attempt_at)
  SELECT e.id, s.name, p_type, e.sku, e.payload, now()
    FROM new_events e CROSS JOIN subscribers s;
END
$fn$;
