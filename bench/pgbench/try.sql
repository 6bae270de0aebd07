-- The raw-SQL ceiling of one Try: the best single statement for the same storage work — insert
-- the order, reserve with the conditional UPDATE, insert the reservation. :skus = 1 is the hot SKU.
\set s random(1, :skus)
WITH o AS (
  INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key,
                      items, idempotency_key, request_hash)
  SELECT g.id, 'pgb-' || g.id, 'c', 'TRY_SUCCESS', 1000, 'USD', now() + interval '1 hour', 'pgb-charge-' || g.id,
         jsonb_build_array(jsonb_build_object('sku', :prefix || (:s)::text, 'quantity', 1, 'unitPriceMinor', 1000)), 'pgb-' || g.id, 'h'
    FROM (SELECT gen_random_uuid() AS id) g
  RETURNING transaction_id),
r AS (UPDATE skus SET reserved = reserved + 1 WHERE sku = :prefix || (:s)::text AND on_hand - reserved >= 1 RETURNING sku)
INSERT INTO reservations (transaction_id, sku, quantity) SELECT o.transaction_id, r.sku, 1 FROM o, r;
