/** A SKU's stock at one location (API.md, "Inventory JSON"). */
export interface LocationStockView {
  locationId: string;
  onHand: number;
  reserved: number;
  safetyStock: number;
  /** max(0, onHand - reserved - safetyStock); 0 when the location is inactive. */
  available: number;
  active: boolean;
}

/**
 * A SKU as the API answers it (API.md, "Inventory JSON"): its figures are the sums over its
 * locations, listed like the locations (priority, then id). Built by Postgres (tcc_inventory_json,
 * stock/inventory-json.sql); dependency-free, so the console page can import it.
 */
export interface InventoryView {
  sku: string;
  name: string;
  priceMinor: number;
  currency: string;
  onHand: number;
  reserved: number;
  safetyStock: number;
  available: number;
  lowStockThreshold: number;
  locations: LocationStockView[];
}
