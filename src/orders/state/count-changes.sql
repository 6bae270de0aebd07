-- tcc_count_changes: the statement-level trigger behind the order counts. Each statement on
-- `orders` appends its net change per status to order_count_deltas (inserts only: no row that
-- two transactions fight over); the sweeper folds the deltas into order_counts, and /metrics and
-- the console read both (ORDER_FIGURES in orders.sql.ts).
--
-- Migration 1763760000000 creates the triggers, so it also creates a first version of this
-- function; this file is the live one. Applied after the migrations, and again whenever this
-- file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_count_changes() RETURNS trigger
LANGUAGE plpgsql
AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- New orders, per status.
    INSERT INTO order_count_deltas (status, delta) SELECT status, count(*) FROM new_rows GROUP BY status;
  ELSIF TG_OP = 'DELETE' THEN
    -- Deleted orders (retention), per status.
    INSERT INTO order_count_deltas (status, delta) SELECT status, -count(*) FROM old_rows GROUP BY status;
  ELSE
    -- Updates: only the rows whose status changed, one out of the old status and one into the new.
    INSERT INTO order_count_deltas (status, delta)
    SELECT d.status, sum(d.delta) FROM (
      SELECT o.status, -1 AS delta FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.status <> o.status
      UNION ALL
      SELECT n.status, 1 FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.status <> o.status) d
    GROUP BY d.status HAVING sum(d.delta) <> 0;
  END IF;
  RETURN NULL;
END
$fn$;
