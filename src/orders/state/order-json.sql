-- tcc_order_json: the contract's order JSON (API.md "Order"), built where the row is: the one
-- definition behind every answer that carries an order — Try, Confirm, reads, the admin views,
-- webhook payloads. The TypeScript shape is orders/state/order.types.ts.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_order_json(o orders) RETURNS json
LANGUAGE sql STABLE
AS $fn$
  SELECT json_build_object(
    'id', o.id, 'transactionId', o.transaction_id, 'customerId', o.customer_id, 'status', o.status,
    'items', o.items,
    'amountMinor', o.amount_minor, 'currency', o.currency,
    'reservationExpiresAt', tcc_iso(o.reservation_expires_at), 'confirmAttempts', o.confirm_attempts,
    'paymentId', o.payment_id, 'failureReason', o.failure_reason,
    -- null for an order paid at Confirm; the payment held at Try otherwise.
    'payment', CASE WHEN o.payment_status IS NOT NULL THEN json_build_object(
      'status', o.payment_status, 'paymentId', o.payment_id, 'authorizedMinor', o.authorized_minor,
      'capturedMinor', o.captured_minor, 'authorizationExpiresAt', tcc_iso(o.authorization_expires_at)) END,
    'createdAt', tcc_iso(o.created_at), 'updatedAt', tcc_iso(o.updated_at))
$fn$;
