-- The raw-SQL ceiling of a Try over three locations (the spread3 workload): one statement that
-- does the same per-location work as the engine, correct under concurrency. It locks the SKU's
-- stock rows that have stock free at active locations (FOR NO KEY UPDATE, so it reads them as the
-- last writer left them), allocates the line in priority order (each location takes what it can,
-- the next one the rest), and only when the whole line fits: inserts the order with the line's
-- allocations, reserves each allocation at its location, and inserts one reservation row per
-- location. The SKUs are walked like the service's (bench/wrk/try-walk.lua): client c takes
-- :start + c, then every :clients-th after it, so each Try meets a SKU's stock as seeded and the
-- share of split lines is the seeded one. :q is the line's quantity.
\set n :n + 1
\set k 1 + (:start + (:n - 1) * :clients + :client_id) % :skus
WITH c AS MATERIALIZED (
  SELECT st.location_id, st.on_hand - st.reserved - st.safety_stock AS free, l.priority
    FROM stock st JOIN locations l ON l.id = st.location_id
   WHERE st.sku = (:prefix)::text || (:k)::text AND l.active AND st.on_hand - st.reserved - st.safety_stock > 0
   ORDER BY l.priority, st.location_id
     FOR NO KEY UPDATE OF st),
t AS MATERIALIZED (
  SELECT a.location_id, a.priority, a.take FROM (
    SELECT c.location_id, c.priority, least(c.free, (:q)::int - (sum(c.free) OVER w - c.free))::int AS take
      FROM c WINDOW w AS (ORDER BY c.priority, c.location_id)) a
   WHERE a.take > 0),
fits AS (SELECT coalesce(sum(t.take), 0) = (:q)::int AS ok FROM t),
o AS (
  INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key,
                      items, idempotency_key, request_hash)
  SELECT g.id, 'pgb-' || g.id, 'c', 'TRY_SUCCESS', 1000 * (:q)::int, 'USD', now() + interval '1 hour', 'pgb-charge-' || g.id,
         jsonb_build_array(jsonb_build_object('sku', (:prefix)::text || (:k)::text, 'quantity', (:q)::int, 'unitPriceMinor', 1000,
           'allocations', (SELECT jsonb_agg(jsonb_build_object('locationId', t.location_id, 'quantity', t.take) ORDER BY t.priority, t.location_id) FROM t))),
         'pgb-' || g.id, 'h'
    FROM (SELECT gen_random_uuid() AS id) g, fits WHERE fits.ok
  RETURNING transaction_id),
r AS (UPDATE stock st SET reserved = st.reserved + t.take FROM t, fits
       WHERE fits.ok AND st.sku = (:prefix)::text || (:k)::text AND st.location_id = t.location_id
      RETURNING st.location_id, t.take)
INSERT INTO reservations (transaction_id, sku, location_id, quantity)
SELECT o.transaction_id, (:prefix)::text || (:k)::text, r.location_id, r.take FROM o, r;
