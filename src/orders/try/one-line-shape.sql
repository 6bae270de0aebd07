-- tcc_one_line_shape: whether a batch of Trys has the common shape tcc_judge_one_line judges —
-- exactly one line per order, the lines in order, and no allowed locations (each line names its
-- order, 1-based, as tcc_judge_trys takes them). A loop, not a query: the callers evaluate it as
-- a plain expression, with no statement to plan.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_one_line_shape(p_keys text[], p_line_order int[], p_locations text[]) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
  IF coalesce(cardinality(p_locations), 0) <> 0 OR cardinality(p_line_order) IS DISTINCT FROM cardinality(p_keys) THEN
    RETURN false;
  END IF;
  FOR i IN 1 .. cardinality(p_line_order) LOOP
    IF p_line_order[i] IS DISTINCT FROM i THEN
      RETURN false;
    END IF;
  END LOOP;
  RETURN true;
END
$fn$;
