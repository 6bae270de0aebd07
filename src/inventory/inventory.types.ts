/** A SKU as the API answers it (API.md, "Inventory"); dependency-free, so the console page can import it. */
export interface InventoryView {
  sku: string;
  name: string;
  priceMinor: number;
  currency: string;
  onHand: number;
  reserved: number;
  available: number;
}
