import type { OrderStatus } from './order-state.js';

export interface OrderItem {
  sku: string;
  quantity: number;
  unitPriceMinor: number;
}

/** The contract's order JSON (written by Postgres: tcc_order_json); dependency-free, so the console page can import it. */
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
