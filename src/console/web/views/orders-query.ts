/**
 * The orders list's address: its filters and page in the console URL (everything the list shows
 * comes from it), and the admin API's query for them.
 */
import { ORDER_STATUSES } from '../format.js';
import type { Filters } from '../types.js';

export const SKU = /^[A-Za-z0-9_.:-]{1,64}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The start of an order id, 8 characters or more, as Search takes it. */
export const ID_PREFIX = /^[0-9a-f]{8}(?:-?[0-9a-f-]{0,27})$/i;

/** Where in the list: a page number and the cursor that reached it (none on the first page). */
export interface Position {
  page: number;
  cursor: string | null;
}

/** The filters a console URL names; anything malformed counts as not given. */
export function filtersOf(q: URLSearchParams): Filters {
  const status = q.get('status') ?? '';
  const older = q.get('olderThan') ?? '';
  const sku = q.get('sku') ?? '';
  return {
    status: (ORDER_STATUSES as readonly string[]).includes(status) ? status : '',
    needsAttention: q.get('needsAttention') === 'true',
    customerId: (q.get('customer') ?? '').slice(0, 128),
    sku: SKU.test(sku) ? sku : '',
    olderThanMinutes: /^\d{1,7}$/.test(older) ? older : '',
    idPrefix: ID_PREFIX.test(q.get('id') ?? '') ? q.get('id')!.toLowerCase() : '',
    // Newest first unless asked: what just went wrong is what an operator opens the list for.
    sort: q.get('sort') === 'oldest' ? 'oldest' : 'newest',
  };
}

export function positionOf(q: URLSearchParams): Position {
  const page = Number(q.get('page'));
  const cursor = q.get('cursor');
  return cursor && Number.isInteger(page) && page > 1 ? { page, cursor } : { page: 1, cursor: null };
}

/** The console URL of a list. */
export function listHref(f: Filters, at: Position = { page: 1, cursor: null }): string {
  const q = new URLSearchParams();
  if (f.status) q.set('status', f.status);
  if (f.needsAttention) q.set('needsAttention', 'true');
  if (f.customerId) q.set('customer', f.customerId);
  if (f.sku) q.set('sku', f.sku);
  if (f.olderThanMinutes) q.set('olderThan', f.olderThanMinutes);
  if (f.idPrefix) q.set('id', f.idPrefix);
  if (f.sort === 'oldest') q.set('sort', 'oldest');
  if (at.cursor) {
    q.set('page', String(at.page));
    q.set('cursor', at.cursor);
  }
  const s = q.toString();
  return s ? `/console?${s}` : '/console';
}

/** The admin API's query for the filters (status optional: the counts ask without it). */
export function apiQuery(f: Filters, withStatus: boolean): URLSearchParams {
  const q = new URLSearchParams();
  if (withStatus && f.status) q.set('status', f.status);
  if (f.needsAttention) q.set('needsAttention', 'true');
  if (f.customerId) q.set('customerId', f.customerId);
  if (f.sku) q.set('sku', f.sku);
  if (f.olderThanMinutes) q.set('olderThanMinutes', f.olderThanMinutes);
  if (f.idPrefix) q.set('idPrefix', f.idPrefix);
  return q;
}

/** The filters in force, in a few words: "CONFIRM_PENDING · customer c-ana · newest first". */
export function summary(f: Filters): string {
  const parts = [
    f.status,
    f.needsAttention ? 'needs attention' : '',
    f.customerId ? `customer ${f.customerId}` : '',
    f.sku ? `SKU ${f.sku}` : '',
    f.olderThanMinutes ? `older than ${f.olderThanMinutes} min` : '',
    f.idPrefix ? `id ${f.idPrefix}…` : '',
    f.sort === 'oldest' ? 'oldest first' : 'newest first',
  ];
  return parts.filter(Boolean).join(' · ');
}

export function filtered(f: Filters): boolean {
  return !!(f.status || f.needsAttention || f.customerId || f.sku || f.olderThanMinutes || f.idPrefix || f.sort === 'oldest');
}

/** No filter but the sort: what the figures at a glance link from. */
export function unfiltered(sort: Filters['sort']): Filters {
  return { status: '', needsAttention: false, customerId: '', sku: '', olderThanMinutes: '', idPrefix: '', sort };
}
