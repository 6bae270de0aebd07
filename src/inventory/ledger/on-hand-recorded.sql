-- tcc_on_hand_recorded: the other half of the ledger's invariant (constraint triggers
-- stock_on_hand_recorded_insert/_update, deferred to commit, on each stock row whose on_hand
-- changed). At commit the row's latest movement says its on hand: no change of on hand commits
-- without its movement. With tcc_movements_continue, every row's on hand is the sum of its
-- movements' deltas at every commit.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_on_hand_recorded() RETURNS trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_on_hand int;
  v_recorded int;
BEGIN
  SELECT st.on_hand INTO v_on_hand FROM stock st WHERE st.sku = NEW.sku AND st.location_id = NEW.location_id;
  SELECT m.on_hand_after INTO v_recorded FROM stock_movements m
   WHERE m.sku = NEW.sku AND m.location_id = NEW.location_id ORDER BY m.id DESC LIMIT 1;
  IF v_on_hand IS NOT NULL AND v_on_hand <> coalesce(v_recorded, 0) THEN
    RAISE EXCEPTION 'on hand of % at % is % but its ledger says %', NEW.sku, NEW.location_id, v_on_hand, coalesce(v_recorded, 0)
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$fn$;
