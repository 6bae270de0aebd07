-- tcc_allocate: the allocation strategy of API.md ("Allocation"), for one order, as one pure
-- function — the strategy's only definition. The Try engine (orders/try/try-batch.sql) runs it for
-- each order it cannot allocate set-based, and test/allocation.e2e-spec.ts holds the engine's
-- set-based paths to it; the participant's Try (participant/reserve-branch.sql) runs it too.
-- Inputs are the order's lines and every stock row of its SKUs:
--   lines:  sku, quantity (each SKU at most once)
--   stock:  sku, location, its priority, whether it is active, its available quantity
--           (on hand - reserved - safety stock; may be 0 or below)
--   allowed: the Try's locationIds, or NULL for any location
-- Only active locations whose available stock is above 0 and that are allowed take part.
--   priority:         each line takes as much as it can from the first location (lowest priority
--                     number, then id in byte order), then the next, and so on.
--   fewest-locations: the first location (same order) that can serve every line whole takes the
--                     whole order; otherwise as priority.
-- Returns the allocations (line, location, quantity), in line order and, within a line, in the
-- order they were taken; no zero quantities. When a line cannot be served, returns one row instead:
-- (that line, NULL, what the allowed locations hold of its SKU) for the short line whose SKU is
-- first in byte order.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_allocate(
  p_strategy text,
  p_line_sku text[], p_line_quantity int[],
  p_stock_sku text[], p_stock_location text[], p_stock_priority int[], p_stock_active boolean[], p_stock_available int[],
  p_allowed text[])
RETURNS TABLE (line int, location_id text, quantity int)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  WITH lines AS (
    SELECT l.ord::int AS line, l.sku, l.quantity
      FROM unnest(p_line_sku, p_line_quantity) WITH ORDINALITY AS l(sku, quantity, ord)),
  -- The stock that may serve the order.
  candidates AS (
    SELECT s.sku, s.location, s.priority, s.available
      FROM unnest(p_stock_sku, p_stock_location, p_stock_priority, p_stock_active, p_stock_available) AS s(sku, location, priority, active, available)
     WHERE s.active AND s.available > 0 AND (p_allowed IS NULL OR s.location = ANY (p_allowed))),
  -- A line its candidates cannot serve refuses the order.
  shortfall AS (
    SELECT l.line, coalesce(sum(c.available), 0)::int AS supply
      FROM lines l LEFT JOIN candidates c ON c.sku = l.sku
     GROUP BY l.line, l.sku, l.quantity
    HAVING coalesce(sum(c.available), 0) < l.quantity
     ORDER BY l.sku COLLATE "C" LIMIT 1),
  -- fewest-locations: the first location that holds every line whole.
  whole_order_location AS (
    SELECT c.location
      FROM candidates c JOIN lines l ON l.sku = c.sku AND c.available >= l.quantity
     WHERE p_strategy = 'fewest-locations'
     GROUP BY c.location, c.priority
    HAVING count(*) = (SELECT count(*) FROM lines)
     ORDER BY c.priority, c.location COLLATE "C" LIMIT 1),
  -- priority: a line takes from its candidates in order; `before` is what the earlier ones hold.
  greedy AS (
    SELECT l.line, c.location, c.priority,
           least(c.available, l.quantity - (sum(c.available) OVER taking - c.available)) AS take
      FROM lines l JOIN candidates c ON c.sku = l.sku
    WINDOW taking AS (PARTITION BY l.line ORDER BY c.priority, c.location COLLATE "C"))
  SELECT a.line, a.location, a.quantity FROM (
    SELECT s.line, NULL::text AS location, s.supply AS quantity, 0 AS priority FROM shortfall s
    UNION ALL
    SELECT l.line, w.location, l.quantity, 0 FROM whole_order_location w CROSS JOIN lines l
     WHERE NOT EXISTS (SELECT 1 FROM shortfall)
    UNION ALL
    SELECT g.line, g.location, g.take::int, g.priority FROM greedy g
     WHERE g.take > 0 AND NOT EXISTS (SELECT 1 FROM shortfall) AND NOT EXISTS (SELECT 1 FROM whole_order_location)) a
   ORDER BY a.line, a.priority, a.location COLLATE "C"
$fn$;
