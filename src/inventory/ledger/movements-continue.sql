-- tcc_movements_continue: half of the ledger's invariant, held by the database (trigger
-- stock_movements_continue, after each INSERT statement on stock_movements; the other half is
-- tcc_on_hand_recorded). Each new movement continues its stock row's history: its on_hand_after is
-- the previous movement's (0 before the first) plus its delta — so the last one's on_hand_after is
-- the sum of the row's deltas. A repair is the exception: it records on hand - ledger, whatever the
-- history says (consistency/repair.sql). Writers hold the SKU row's lock, so a row's movements
-- never interleave; movements of one statement follow each other in id order.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_movements_continue() RETURNS trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_broken record;
BEGIN
  SELECT n.sku, n.location_id, n.delta, n.on_hand_after, coalesce(p.on_hand_after, 0) AS before INTO v_broken
    FROM new_rows n
    LEFT JOIN LATERAL (SELECT m.on_hand_after FROM stock_movements m
                        WHERE m.sku = n.sku AND m.location_id = n.location_id AND m.id < n.id ORDER BY m.id DESC LIMIT 1) p ON true
   WHERE n.kind <> 'repair' AND coalesce(p.on_hand_after, 0) + n.delta <> n.on_hand_after
   LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'stock movement of % at % does not continue its history: % + % <> %',
      v_broken.sku, v_broken.location_id, v_broken.before, v_broken.delta, v_broken.on_hand_after USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$fn$;
