-- tcc_branch_reserve: an outside coordinator's Try (POST /tcc/inventory/try), inside its caller's transaction: the
-- barrier's 'try' row first (a repeat, or a Try after its Cancel, finds it), then the checks, then
-- the lines allocated exactly as a checkout Try's (tcc_allocate) against the stock as it is under
-- the SKU rows' locks (taken in byte order), reserved, and recorded per location. An outcome other
-- than 'reserved' or 'repeated' is a refusal: the caller rolls its transaction back.
-- Outcomes: 'reserved', 'repeated' (r_status: the branch as it stands), 'TRANSACTION_CANCELED',
-- 'UNKNOWN_SKU' (r_sku), 'UNKNOWN_LOCATION' (r_location), 'CURRENCY_MISMATCH',
-- 'INSUFFICIENT_STOCK' (r_sku, r_requested, r_available).
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_branch_reserve(
  p_transaction_id text, p_skus text[], p_quantities int[], p_locations text[], p_strategy text, p_ttl_ms float8)
RETURNS TABLE (r_outcome text, r_status text, r_sku text, r_requested int, r_available int, r_location text, r_expires_at timestamptz)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_ops text[];
  v_sku text;
  v_location text;
  v_lines int[];
  v_locations text[];
  v_quantities int[];
  v_expires timestamptz;
BEGIN
  INSERT INTO tcc_barrier (transaction_id, op, reason) VALUES (p_transaction_id, 'try', 'try') ON CONFLICT (transaction_id, op) DO NOTHING;
  IF NOT FOUND THEN
    SELECT array_agg(b.op) INTO v_ops FROM tcc_barrier b WHERE b.transaction_id = p_transaction_id;
    IF 'cancel' = ANY (v_ops) THEN RETURN QUERY SELECT 'TRANSACTION_CANCELED', 'CANCELED', NULL, NULL::int, NULL::int, NULL, NULL::timestamptz; RETURN; END IF;
    RETURN QUERY SELECT 'repeated', CASE WHEN 'confirm' = ANY (v_ops) THEN 'CONFIRMED' ELSE 'RESERVED' END, NULL, NULL::int, NULL::int, NULL, NULL::timestamptz;
    RETURN;
  END IF;

  SELECT min(u.sku COLLATE "C") INTO v_sku FROM unnest(p_skus) u(sku) WHERE NOT EXISTS (SELECT 1 FROM skus s WHERE s.sku = u.sku);
  IF v_sku IS NOT NULL THEN RETURN QUERY SELECT 'UNKNOWN_SKU', NULL, v_sku, NULL::int, NULL::int, NULL, NULL::timestamptz; RETURN; END IF;
  SELECT min(u.id COLLATE "C") INTO v_location FROM unnest(p_locations) u(id) WHERE NOT EXISTS (SELECT 1 FROM locations l WHERE l.id = u.id);
  IF v_location IS NOT NULL THEN RETURN QUERY SELECT 'UNKNOWN_LOCATION', NULL, NULL, NULL::int, NULL::int, v_location, NULL::timestamptz; RETURN; END IF;

  -- The SKU rows in byte order (the guard of their stock), with their currency as it stands.
  IF (SELECT count(DISTINCT x.currency) FROM (SELECT s.currency FROM skus s WHERE s.sku = ANY (p_skus) ORDER BY s.sku COLLATE "C" FOR NO KEY UPDATE) x) > 1 THEN
    RETURN QUERY SELECT 'CURRENCY_MISMATCH', NULL, NULL, NULL::int, NULL::int, NULL, NULL::timestamptz; RETURN;
  END IF;

  -- The allocation, on the stock as the locks left it (a later statement than the locks).
  SELECT array_agg(a.line ORDER BY a.ord), array_agg(a.location_id ORDER BY a.ord), array_agg(a.quantity ORDER BY a.ord)
    INTO v_lines, v_locations, v_quantities
    FROM (SELECT array_agg(st.sku) AS skus, array_agg(st.location_id) AS locs, array_agg(l.priority) AS prios, array_agg(l.active) AS actives,
                 array_agg(st.on_hand - st.reserved - st.safety_stock) AS frees
            FROM stock st JOIN locations l ON l.id = st.location_id WHERE st.sku = ANY (p_skus)) s
    CROSS JOIN LATERAL tcc_allocate(p_strategy, p_skus, p_quantities, s.skus, s.locs, s.prios, s.actives, s.frees,
                                    CASE WHEN cardinality(p_locations) > 0 THEN p_locations END) WITH ORDINALITY AS a(line, location_id, quantity, ord);
  IF v_locations[1] IS NULL THEN
    RETURN QUERY SELECT 'INSUFFICIENT_STOCK', NULL, p_skus[v_lines[1]], p_quantities[v_lines[1]], v_quantities[1], NULL, NULL::timestamptz;
    RETURN;
  END IF;

  -- Reserved where allocated, recorded per location, and the branch with its deadline.
  WITH allocated AS (
    SELECT p_skus[u.line] AS sku, u.line, u.location_id, u.quantity, u.ord
      FROM unnest(v_lines, v_locations, v_quantities) WITH ORDINALITY AS u(line, location_id, quantity, ord)),
  reserved AS (
    UPDATE stock st SET reserved = st.reserved + a.quantity, updated_at = now()
      FROM allocated a WHERE st.sku = ANY (p_skus) AND st.sku = a.sku AND st.location_id = a.location_id),
  recorded AS (
    INSERT INTO reservations (transaction_id, sku, location_id, quantity)
    SELECT p_transaction_id, a.sku, a.location_id, a.quantity FROM allocated a)
  INSERT INTO participant_branches (transaction_id, status, items, expires_at)
  SELECT p_transaction_id, 'RESERVED',
         (SELECT jsonb_agg(jsonb_build_object('sku', l.sku, 'quantity', l.quantity,
                   'allocations', (SELECT jsonb_agg(jsonb_build_object('locationId', a.location_id, 'quantity', a.quantity) ORDER BY a.ord)
                                     FROM allocated a WHERE a.line = l.line)) ORDER BY l.sku COLLATE "C")
            FROM unnest(p_skus, p_quantities) WITH ORDINALITY AS l(sku, quantity, line)),
         now() + make_interval(secs => p_ttl_ms / 1000)
  RETURNING expires_at INTO v_expires;
  IF EXISTS (SELECT 1 FROM skus s WHERE s.sku = ANY (p_skus) AND (s.low_stock_threshold > 0 OR s.low_stock)) THEN
    PERFORM tcc_low_stock(p_skus);
  END IF;
  RETURN QUERY SELECT 'reserved', 'RESERVED', NULL, NULL::int, NULL::int, NULL, v_expires;
  RETURN;
END
$fn$;
