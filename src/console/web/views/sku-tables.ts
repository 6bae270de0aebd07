import { h } from '../dom.js';
import { money, shortTime } from '../format.js';
import type { Inventory, Movement } from '../types.js';
import { cell } from '../widgets.js';
import { DEFAULT_LOCATION } from '../../../inventory/locations/default-location.js';

/** A SKU page's renderers: its figures, its stock per location, its movements. */

/** The contract's adjustment reasons, in the words the select shows. */
export const REASONS: [string, string][] = [
  ['received', 'Received'],
  ['returned', 'Returned'],
  ['damaged', 'Damaged'],
  ['lost', 'Lost'],
  ['correction', 'Correction'],
  ['cycle_count', 'Cycle count'],
];

/**
 * The locations a SKU's table lists: `default` left out when it holds nothing and the SKU has stock
 * elsewhere (every SKU has a row there; an empty one only distracts).
 */
export function shownLocations(i: Inventory): Inventory['locations'] {
  const elsewhere = i.locations.some((l) => l.locationId !== DEFAULT_LOCATION && (l.onHand > 0 || l.reserved > 0));
  return i.locations.filter((l) => !(elsewhere && l.locationId === DEFAULT_LOCATION && l.onHand === 0 && l.reserved === 0));
}

/** Who made a movement: the actor, and the console operator's name when one was given. */
export function by(m: Pick<Movement, 'actor' | 'operator'>): string {
  return m.operator ? `${m.actor} (${m.operator})` : m.actor;
}

/** The SKU's name (when it has one) and its figures at a glance. */
export function stockSummary(i: Inventory): (HTMLElement | null)[] {
  const fig = (label: string, value: string) => h('div', { class: 'figure' }, h('dt', null, label), h('dd', null, value));
  return [
    i.name && i.name !== i.sku ? h('p', { class: 'sku-name' }, i.name) : null,
    h(
      'dl',
      { class: 'figure-list narrow' },
      fig('Price', money(i.priceMinor, i.currency)),
      fig('On hand', String(i.onHand)),
      fig('Reserved', String(i.reserved)),
      fig('Safety stock', String(i.safetyStock)),
      fig('Available', String(i.available)),
      fig('Low stock at', i.lowStockThreshold > 0 ? String(i.lowStockThreshold) : 'off'),
    ),
  ];
}

/** One row per location the table lists (shownLocations). */
export function stockRows(i: Inventory): HTMLElement[] {
  return shownLocations(i).map((l) =>
    h(
      'tr',
      null,
      cell('Location', { class: 'card-title' }, h('code', null, l.locationId), l.active ? null : h('span', { class: 'flag' }, 'inactive')),
      cell('On hand', { class: 'num' }, String(l.onHand)),
      cell('Reserved', { class: 'num' }, String(l.reserved)),
      cell('Safety stock', { class: 'num' }, String(l.safetyStock)),
      cell('Available', { class: 'num' }, String(l.available)),
    ),
  );
}

/** A page of movements, newest first (one line saying so when there are none). */
export function movementRows(movements: Movement[]): HTMLElement | HTMLElement[] {
  if (movements.length === 0) return h('tr', null, h('td', { colspan: 8, class: 'empty' }, 'No movements yet.'));
  return movements.map((m) =>
    h(
      'tr',
      null,
      cell('Time (UTC)', { class: 'card-title' }, h('time', { datetime: m.at }, shortTime(m.at))),
      cell('Location', null, h('code', null, m.locationId)),
      cell('Kind', null, m.kind),
      cell('Delta', { class: 'num' }, m.delta > 0 ? `+${m.delta}` : String(m.delta)),
      cell('On hand after', { class: 'num' }, String(m.onHandAfter)),
      cell('Reason', null, m.reason ? reasonText(m.reason) : '—'),
      cell('Reference', { class: 'wrap' }, m.reference ?? '—'),
      cell('By', null, by(m)),
    ),
  );
}

/** A reason as the select words it; another (a repair's, an import's) as it is. */
export function reasonText(reason: string | null): string {
  return REASONS.find(([value]) => value === reason)?.[1] ?? reason ?? '—';
}
