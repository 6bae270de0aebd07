/** The admin API's answers, as the page reads them (API.md, "Order JSON" and "Admin API"). */
import type { InventoryView } from '../../inventory/inventory.types.js';
import type { OrderItem, OrderView } from '../../orders/state/order.types.js';

export type { OrderItem };

/** Admin order JSON: the order JSON plus what operators need. */
export interface AdminOrder extends OrderView {
  nextActionAt: string | null;
  /** A CONFIRM_PENDING order: its last gateway outcome, in words among the rest. */
  lastOutcome: { step: string; reason: string; httpStatus: number | null; text: string; at: string } | null;
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
  /** Deliveries whose latest attempt was in the last hour. */
  lastHour: { delivered: number; failed: number };
  failedDeliveries: number;
  lastFailure: { at: string; deliveryId: string; error: string; httpStatus: number | null; body: string | null } | null;
}

export interface WebhookDelivery {
  id: string;
  type: string;
  orderId: string | null;
  status: string;
  attempts: number;
  lastError: string | null;
  lastStatus: number | null;
  lastResponse: string | null;
  createdAt: string;
}

/** The order list as its URL states it: filters and sort, so Back, reload and a shared link agree. */
export interface Filters {
  status: string;
  needsAttention: boolean;
  customerId: string;
  sku: string;
  olderThanMinutes: string;
  /** The start of an order id (Search with 8 characters or more). */
  idPrefix: string;
  sort: 'oldest' | 'newest';
}

/** A stock location (GET /admin/locations). */
export interface StockLocation {
  id: string;
  name: string;
  priority: number;
  active: boolean;
}

/** A catalogue entry: a SKU and the locations where it is low. */
export interface CatalogueItem extends Inventory {
  lowAt: string[];
}

/** A page of the catalogue (GET /admin/inventory). */
export interface InventoryPage {
  data: CatalogueItem[];
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

/** What a location holds now (GET /admin/locations/{id}/usage). */
export interface LocationUsage {
  locationId: string;
  holdingOrders: number;
  reservedBranches: number;
  skusWithStock: number;
  reservedUnits: number;
}

/** Who did something (API.md, "Who did it"). */
export interface Principal {
  type: 'root' | 'api_key' | 'operator' | 'system';
  id: string | null;
  name: string | null;
}

/** An API key as the admin API lists it (never the key itself). */
export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** An operator (a person who signs in to the console). */
export interface Operator {
  id: string;
  email: string;
  name: string;
  role: string;
  createdAt: string;
  disabledAt: string | null;
  lastSignInAt: string | null;
}

/** One line of the audit log. */
export interface AuditEntry {
  id: string;
  at: string;
  principal: Principal | null;
  action: string;
  target: string | null;
  outcome: number;
  requestId: string | null;
  address: string | null;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}
