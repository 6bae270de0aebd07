import { isPgTimestamp } from '../common/signed-cursor.js';
import { isUuid } from '../common/uuid.js';

/** The admin order list's cursors (a SignedCursor purpose). */
export const ORDER_LIST_CURSOR = 'admin-orders';

/** Where a page of the admin order list ends: the last order's created_at (as Postgres wrote it) and id. */
export type Position = [createdAt: string, id: string];

/** A position exactly of the shape the list writes, and one Postgres can read back. */
export function isPosition(values: string[]): boolean {
  return isPgTimestamp(values[0]) && isUuid(values[1]);
}
