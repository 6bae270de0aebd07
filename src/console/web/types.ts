/** The admin API's answers, as the page reads them (API.md, "Order JSON" and "Admin API"). */
export interface OrderItem {
  sku: string;
  quantity: number;
  unitPriceMinor: number;
}

export interface AdminOrder {
  id: string;
  transactionId: string;
  customerId: string;
  status: string;
  items: OrderItem[];
  amountMinor: number;
  currency: string;
  reservationExpiresAt: string;
  confirmAttempts: number;
  paymentId: string | null;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
  nextActionAt: string | null;
  refundStatus: string | null;
  needsAttention: boolean;
}

export interface OrderPage {
  data: AdminOrder[];
  nextCursor: string | null;
}

export interface TimelineEvent {
  type: string;
  at: string;
  data: Record<string, unknown>;
}

export interface Inventory {
  sku: string;
  name: string;
  priceMinor: number;
  currency: string;
  onHand: number;
  reserved: number;
  available: number;
}

export interface Stats {
  ordersByStatus: Record<string, number>;
  needingAttention: number;
  breaker: string;
}
