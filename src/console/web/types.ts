/** The admin API's answers, as the page reads them (API.md, "Order JSON" and "Admin API"). */
import type { InventoryView } from '../../inventory/inventory.types.js';
import type { OrderItem, OrderView } from '../../orders/state/order.types.js';

export type { OrderItem };

/** Admin order JSON: the order JSON plus what operators need. */
export interface AdminOrder extends OrderView {
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

/** A SKU as GET /inventory/{sku} answers it. */
export type Inventory = InventoryView;

export interface Stats {
  ordersByStatus: Record<string, number>;
  needingAttention: number;
  breaker: string;
}
