-- tcc_allocate_in_turn: many orders allocated at once, set-based, exactly as tcc_allocate
-- (allocate.sql, the strategy's definition) would allocate them one after the other in arrival
-- order, each against what the orders before it took — for the common case, where every order
-- fits what is there:
--   priority:         each SKU's demand within its free stock;
--   fewest-locations: also each order's SKUs first found (their first row with stock, in
--                     allocation order) at one location, which holds the batch's demand of each —
--                     so tcc_allocate's first whole-order location is that one for every order.
-- (A SKU without stock rows holds 0.) Then, in arrival order, each line takes its SKU's free stock in allocation order where the lines
-- before it left off: demand and supply as intervals on one axis per SKU, a line taking the overlap
-- of its interval with each stock row's. When the batch does not fit so, r_fits is false (NULL with
-- no lines) and nothing is allocated: the caller allocates one order after the other through
-- tcc_allocate. The Try engine (orders/try/try-batch.sql) uses both; test/medium/allocation.spec.ts
-- holds this one to tcc_allocate on random batches.
-- Inputs: the open lines in arrival order (their order, an id the caller knows the line by, their
-- SKU as an index into the SKU list, the quantity; a SKU at most once per order), per SKU its first
-- stock row and row count, the rows grouped by SKU in allocation order (location priority, then
-- id), per row its location and what is free there (0 at an inactive location).
-- Returns one row: whether the batch fits, and its allocations (order, line id, stock row, quantity)
-- in order, line and row order.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_allocate_in_turn(
  p_strategy text,
  p_line_order int[], p_line_id int[], p_line_sku int[], p_line_quantity int[],
  p_sku_first int[], p_sku_rows int[], p_row_location text[], p_row_free int[])
RETURNS TABLE (r_fits boolean, r_order int[], r_line int[], r_row int[], r_quantity int[])
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  WITH lines AS (
    SELECT l.oi, l.id, l.k, l.quantity
      FROM unnest(p_line_order, p_line_id, p_line_sku, p_line_quantity) AS l(oi, id, k, quantity)),
  sku_supply AS (
    SELECT k.pos AS k,
           (SELECT sum(p_row_free[r]) FROM generate_series(p_sku_first[k.pos], p_sku_first[k.pos] + p_sku_rows[k.pos] - 1) r) AS total,
           (SELECT min(r) FROM generate_series(p_sku_first[k.pos], p_sku_first[k.pos] + p_sku_rows[k.pos] - 1) r WHERE p_row_free[r] > 0) AS first_row
      FROM generate_subscripts(p_sku_first, 1) AS k(pos)),
  per_order AS (
    SELECT l.oi, count(DISTINCT p_row_location[ss.first_row]) = 1 AND bool_and(ss.first_row IS NOT NULL) AS one_first_location
      FROM lines l LEFT JOIN sku_supply ss ON ss.k = l.k GROUP BY l.oi),
  per_sku AS (
    SELECT l.k, sum(l.quantity) AS demand FROM lines l GROUP BY l.k),
  fits AS (
    SELECT (SELECT bool_and(p_strategy = 'priority' OR po.one_first_location) FROM per_order po)
       AND (SELECT bool_and(ps.demand <= coalesce(CASE WHEN p_strategy = 'priority' THEN ss.total ELSE p_row_free[ss.first_row] END, 0))
              FROM per_sku ps JOIN sku_supply ss ON ss.k = ps.k) AS ok),
  demand AS (
    SELECT l.oi, l.id, l.k, l.quantity, sum(l.quantity) OVER (PARTITION BY l.k ORDER BY l.oi) AS upto
      FROM lines l WHERE (SELECT f.ok FROM fits f)),
  supply AS (
    SELECT k.pos AS k, r, p_row_free[r] AS free, sum(p_row_free[r]) OVER (PARTITION BY k.pos ORDER BY r) AS upto
      FROM generate_subscripts(p_sku_first, 1) AS k(pos), generate_series(p_sku_first[k.pos], p_sku_first[k.pos] + p_sku_rows[k.pos] - 1) r
     WHERE p_row_free[r] > 0 AND (SELECT f.ok FROM fits f)),
  takes AS (
    SELECT d.oi, d.id, s.r, (least(d.upto, s.upto) - greatest(d.upto - d.quantity, s.upto - s.free))::int AS quantity
      FROM demand d JOIN supply s ON s.k = d.k AND s.upto - s.free < d.upto AND d.upto - d.quantity < s.upto)
  SELECT (SELECT f.ok FROM fits f),
         coalesce(array_agg(t.oi ORDER BY t.oi, t.id, t.r), '{}'), coalesce(array_agg(t.id ORDER BY t.oi, t.id, t.r), '{}'),
         coalesce(array_agg(t.r ORDER BY t.oi, t.id, t.r), '{}'), coalesce(array_agg(t.quantity ORDER BY t.oi, t.id, t.r), '{}')
    FROM takes t
$fn$;
