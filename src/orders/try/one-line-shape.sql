-- tcc_one_line_shape: whether a batch of Trys has the common shape tcc_judge_one_line judges —
-- exactly one line per order, the lines in order, and no allowed locations (each line names its
-- order, 1-based, as tcc_judge_trys takes them).
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_one_line_shape(p_keys text[], p_line_order int[], p_locations text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $fn$
  SELECT coalesce(cardinality(p_locations), 0) = 0
     AND coalesce(cardinality(p_line_order) = cardinality(p_keys)
                  AND p_line_order = ARRAY(SELECT g FROM generate_series(1, cardinality(p_keys)) g), false)
$fn$;
