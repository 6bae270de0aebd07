-- The raw-SQL ceiling of Try + Confirm: the Try statement, then one statement that marks the order
-- paid, commits its stock and writes the sale to the ledger (a movement of -quantity with the
-- on hand after it, as a Confirm does).
\set s random(1, :skus)
WITH o AS (
  INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key,
                      items, idempotency_key, request_hash)
  SELECT g.id, 'pgb-' || g.id, 'c', 'TRY_SUCCESS', 1000, 'USD', now() + interval '1 hour', 'pgb-charge-' || g.id,
         jsonb_build_array(jsonb_build_object('sku', :prefix || (:s)::text, 'quantity', 1, 'unitPriceMinor', 1000,
                                              'allocations', jsonb_build_array(jsonb_build_object('locationId', 'default', 'quantity', 1)))),
         'pgb-' || g.id, 'h'
    FROM (SELECT gen_random_uuid() AS id) g
  RETURNING id, transaction_id),
r AS (UPDATE stock SET reserved = reserved + 1
       WHERE sku = :prefix || (:s)::text AND location_id = 'default' AND on_hand - reserved - safety_stock >= 1 RETURNING sku)
INSERT INTO reservations (transaction_id, sku, location_id, quantity) SELECT o.transaction_id, r.sku, 'default', 1 FROM o, r
RETURNING (SELECT id FROM o) AS order_id \gset
WITH o AS (UPDATE orders SET status = 'CONFIRM_SUCCESS', payment_id = 'pgb-pay', updated_at = now() WHERE id = :order_id RETURNING id, transaction_id),
s AS (UPDATE stock st SET on_hand = st.on_hand - r.quantity, reserved = st.reserved - r.quantity
        FROM reservations r JOIN o ON o.transaction_id = r.transaction_id
       WHERE st.sku = r.sku AND st.location_id = r.location_id
      RETURNING st.sku, st.location_id, r.quantity, st.on_hand, o.id)
INSERT INTO stock_movements (sku, location_id, kind, delta, on_hand_after, reference, actor)
SELECT s.sku, s.location_id, 'sale', -s.quantity, s.on_hand, s.id::text, 'system' FROM s;
