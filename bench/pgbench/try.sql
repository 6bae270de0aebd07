-- The raw-SQL ceiling of one Try: the best single statement for the same storage work — insert
-- the order (its line allocated to the default location), reserve there with the conditional
-- UPDATE, insert the reservation. :skus = 1 is the hot SKU.
\set s random(1, :skus)
WITH o AS (
  INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key,
                      items, idempotency_key, request_hash)
  SELECT g.id, 'pgb-' || g.id, 'c', 'TRY_SUCCESS', 1000, 'USD', now() + interval '1 hour', 'pgb-charge-' || g.id,
         jsonb_build_array(jsonb_build_object('sku', :prefix || (:s)::text, 'quantity', 1, 'unitPriceMinor', 1000,
                                              'allocations', jsonb_build_array(jsonb_build_object('locationId', 'default', 'quantity', 1)))),
         'pgb-' || g.id, 'h'
    FROM (SELECT gen_random_uuid() AS id) g
  RETURNING transaction_id),
r AS (UPDATE stock SET reserved = reserved + 1
       WHERE sku = :prefix || (:s)::text AND location_id = 'default' AND on_hand - reserved - safety_stock >= 1 RETURNING sku)
INSERT INTO reservations (transaction_id, sku, location_id, quantity) SELECT o.transaction_id, r.sku, 'default', 1 FROM o, r;
