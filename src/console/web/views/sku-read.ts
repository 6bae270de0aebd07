import { api, ApiError } from '../api.js';
import type { Inventory, InventoryPage } from '../types.js';

/**
 * One SKU's inventory JSON, read through the catalogue (`GET /admin/inventory`, scope
 * `inventory:read`, which every console role holds) — never through the checkout route
 * `GET /inventory/{sku}`, which with CHECKOUT_AUTH=required needs `checkout`, a scope no operator
 * role has. The catalogue is ordered by sku byte by byte, so among the SKUs starting with `sku` the
 * SKU itself, when it exists, comes first: one row answers. Anything else is 404 NOT_FOUND, as the
 * checkout route answers an unknown SKU.
 */
export async function readSku(sku: string): Promise<Inventory> {
  const q = new URLSearchParams({ skuPrefix: sku, limit: '1' });
  const first = (await api<InventoryPage>('GET', `/admin/inventory?${q}`)).data[0];
  if (first?.sku !== sku) throw new ApiError(404, 'NOT_FOUND', `SKU ${sku} not found`);
  return first;
}
