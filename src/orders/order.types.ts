import type { OrderStatus } from './order-state.js';

export interface OrderItem {
  sku: string;
  quantity: number;
  unitPriceMinor: number;
}

/** A row of `orders` as Postgres returns it (bigint comes back as a string). */
export interface OrderRow {
  id: string;
  transaction_id: string;
  customer_id: string;
  status: OrderStatus;
  amount_minor: string;
  currency: string;
  reservation_expires_at: Date;
  confirm_attempts: number;
  payment_key: string;
  payment_token: string | null;
  payment_id: string | null;
  payment_requested_at: Date | null;
  next_action_at: Date | null;
  failure_reason: string | null;
  force_confirmed: boolean;
  refund_status: 'PENDING' | 'DONE' | 'NEEDS_ATTENTION' | null;
  refund_check_until: Date | null;
  refund_next_at: Date | null;
  refund_failures: number;
  created_at: Date;
  updated_at: Date;
  items: OrderItem[];
  /** reservation_expires_at has passed, by the database's clock. */
  expired: boolean;
}

/** The contract's order JSON. */
export interface OrderView {
  id: string;
  transactionId: string;
  customerId: string;
  status: OrderStatus;
  items: OrderItem[];
  amountMinor: number;
  currency: string;
  reservationExpiresAt: string;
  confirmAttempts: number;
  paymentId: string | null;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export function toOrderView(row: OrderRow): OrderView {
  return {
    id: row.id,
    transactionId: row.transaction_id,
    customerId: row.customer_id,
    status: row.status,
    items: (row.items ?? []).map((i) => ({ sku: i.sku, quantity: i.quantity, unitPriceMinor: Number(i.unitPriceMinor) })),
    amountMinor: Number(row.amount_minor),
    currency: row.currency,
    reservationExpiresAt: new Date(row.reservation_expires_at).toISOString(),
    confirmAttempts: row.confirm_attempts,
    paymentId: row.payment_id,
    failureReason: row.failure_reason,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export interface OrderEvent {
  type: string;
  at: string;
  data: Record<string, unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Order ids are UUIDs; anything else cannot name an order (answered 404, never 400 or 500). */
export function isOrderId(id: string): boolean {
  return UUID.test(id);
}
