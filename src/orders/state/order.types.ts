import type { OrderStatus, PaymentStatus } from './order-state.js';

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
  /** null for an order paid at Confirm; the payment held at Try (API.md "Order JSON"). */
  payment: OrderPayment | null;
  createdAt: string;
  updatedAt: string;
}

/** The payment of an order authorized at Try. */
export interface OrderPayment {
  status: PaymentStatus;
  paymentId: string | null;
  authorizedMinor: number | null;
  capturedMinor: number;
  authorizationExpiresAt: string | null;
}
