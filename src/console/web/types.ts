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

/** GET /admin/orders/counts: orders the filters match, in all and per status under the other filters. */
export interface OrderCounts {
  total: number;
  byStatus: Record<string, number>;
}

/** A payment as the gateway holds it (GET /admin/orders/{id}/payment answers the gateway's own). */
export type { GatewayPayment } from '../../payments/gateway.types.js';

export interface WebhookEndpoint {
  name: string;
  url: string;
  events: string[];
}

export interface WebhookDelivery {
  id: string;
  type: string;
  orderId: string | null;
  status: string;
  attempts: number;
  lastError: string | null;
  createdAt: string;
}

/** The order list as its URL states it: filters and sort, so Back, reload and a shared link agree. */
export interface Filters {
  status: string;
  needsAttention: boolean;
  customerId: string;
  sku: string;
  olderThanMinutes: string;
  sort: 'oldest' | 'newest';
}

/** A stock location (GET /admin/locations). */
export interface StockLocation {
  id: string;
  name: string;
  priority: number;
  active: boolean;
}

/** A page of the catalogue (GET /admin/inventory). */
export interface InventoryPage {
  data: Inventory[];
  nextCursor: string | null;
}

/** One entry of a SKU's ledger (GET /admin/inventory/{sku}/movements). */
export interface Movement {
  id: string;
  at: string;
  sku: string;
  locationId: string;
  kind: string;
  delta: number;
  onHandAfter: number;
  reason: string | null;
  reference: string | null;
  actor: string;
  operator: string | null;
}

export interface MovementPage {
  data: Movement[];
  nextCursor: string | null;
}
