-- tcc_record_movements: the one writer of the stock ledger (stock_movements), as tcc_apply is the
-- one writer of an order's status. Every function that changes a stock row's on hand (the Confirm
-- batch's sales, a branch's settlement, set, adjust, import, repair) records the change through it,
-- in the same transaction: the deferred trigger tcc_on_hand_recorded holds each changed row to its
-- latest movement at commit, and tcc_movements_continue each movement to the one before it.
-- One movement per array position, written in the caller's order (the ledger's ids follow it);
-- every per-movement array as long as p_skus, or NULL where the column is NULL for all of them.
-- p_kind, p_reason and the Idempotency-Key with its request hash are the same for the whole call.
-- Returns the rows written.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_record_movements(
  p_kind text, p_skus text[], p_locations text[], p_deltas int[], p_on_hand_after int[],
  p_references text[], p_actors text[], p_operators text[],
  p_reason text, p_idempotency_key text, p_request_hash text)
RETURNS SETOF stock_movements
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_n int := coalesce(cardinality(p_skus), 0);
BEGIN
  IF coalesce(cardinality(p_locations), 0) <> v_n OR coalesce(cardinality(p_deltas), 0) <> v_n OR coalesce(cardinality(p_on_hand_after), 0) <> v_n
     OR coalesce(cardinality(p_actors), 0) <> v_n OR cardinality(p_references) <> v_n OR cardinality(p_operators) <> v_n THEN
    RAISE EXCEPTION 'tcc_record_movements: every per-movement array must hold % entries', v_n;
  END IF;
  RETURN QUERY
  WITH written AS (
    INSERT INTO stock_movements (sku, location_id, kind, delta, on_hand_after, reason, reference, actor, operator, idempotency_key, request_hash)
    SELECT m.sku, m.location_id, p_kind, m.delta, m.on_hand_after, p_reason, m.reference, m.actor, m.operator, p_idempotency_key, p_request_hash
      FROM unnest(p_skus, p_locations, p_deltas, p_on_hand_after, p_references, p_actors, p_operators)
             WITH ORDINALITY AS m(sku, location_id, delta, on_hand_after, reference, actor, operator, ord)
     ORDER BY m.ord
    RETURNING *)
  SELECT * FROM written;
END
$fn$;
