import { h } from '../dom.js';
import type { Nav } from '../nav.js';
import type { CatalogueItem, Inventory } from '../types.js';
import { cell } from '../widgets.js';
import { DEFAULT_LOCATION } from '../../../inventory/locations/default-location.js';

/** The inventory page's renderers and the facts they show: a catalogue row, a SKU's link. */

/** The link to a SKU's page. */
export function skuHref(sku: string): string {
  return `/console/inventory/${encodeURIComponent(sku)}`;
}

/** Whether a SKU's stock is at `default` alone: only then does "On hand" here set it. */
export function atDefaultAlone(i: Inventory): boolean {
  return i.locations.every((l) => l.locationId === DEFAULT_LOCATION || (l.onHand === 0 && l.reserved === 0));
}

/** A SKU's row: its figures over every location, or at the one chosen; where it is low. */
export function catalogueRow(i: CatalogueItem, at: string, nav: Nav): HTMLElement {
  const there = at ? i.locations.find((l) => l.locationId === at) : undefined;
  const fig = there ?? i;
  const isLow = i.lowStockThreshold > 0 && i.available <= i.lowStockThreshold;
  const lowAt = i.lowAt.map((id) => `${id} (${i.locations.find((l) => l.locationId === id)?.available ?? 0})`).join(', ');
  return h(
    'tr',
    null,
    cell('SKU', { class: 'card-title' }, nav.link(skuHref(i.sku), i.sku), isLow ? ' ' : null, isLow ? h('span', { class: 'flag', title: `At or below its threshold of ${i.lowStockThreshold}` }, 'low') : null),
    cell('Name', { class: 'wrap' }, i.name),
    cell('On hand', { class: 'num' }, String(fig.onHand)),
    cell('Reserved', { class: 'num' }, String(fig.reserved)),
    cell('Available', { class: 'num' }, String(fig.available)),
    cell('Low at', { class: lowAt ? 'low-at' : 'empty-cell' }, lowAt),
  );
}
