-- The raw-SQL ceiling of Try + Confirm: the Try statement, then one statement that commits the
-- stock and marks the order paid.
\set s random(1, :skus)
WITH o AS (
  INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key,
                      items, idempotency_key, request_hash)
  SELECT g.id, 'pgb-' || g.id, 'c', 'TRY_SUCCESS', 1000, 'USD', now() + interval '1 hour', 'pgb-charge-' || g.id,
         jsonb_build_array(jsonb_build_object('sku', :prefix || (:s)::text, 'quantity', 1, 'unitPriceMinor', 1000)), 'pgb-' || g.id, 'h'
    FROM (SELECT gen_random_uuid() AS id) g
  RETURNING id, transaction_id),
r AS (UPDATE skus SET reserved = reserved + 1 WHERE sku = :prefix || (:s)::text AND on_hand - reserved >= 1 RETURNING sku)
INSERT INTO reservations (transaction_id, sku, quantity) SELECT o.transaction_id, r.sku, 1 FROM o, r
RETURNING (SELECT id FROM o) AS order_id \gset
WITH o AS (UPDATE orders SET status = 'CONFIRM_SUCCESS', payment_id = 'pgb-pay', updated_at = now() WHERE id = :order_id RETURNING transaction_id)
UPDATE skus s SET on_hand = s.on_hand - r.quantity, reserved = s.reserved - r.quantity
  FROM reservations r JOIN o ON o.transaction_id = r.transaction_id
 WHERE s.sku = r.sku;
