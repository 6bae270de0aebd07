import type { OrderRow } from './order.types.js';

/**
 * What the coordinator asks of the background machinery, always after the state it acts on has
 * committed. Implementations only accelerate: if a call is lost (Redis down, a crash right after
 * commit), the Postgres sweeper finds the order by its stored times and drives it on.
 */
export abstract class OrderScheduler {
  /** A reservation was made: resolve it at reservationExpiresAt. */
  abstract reservationCreated(order: OrderRow): Promise<void>;
  /** An unknown outcome was recorded: try again at order.next_action_at. */
  abstract retryScheduled(order: OrderRow): Promise<void>;
  /** A released order may have been charged: check and refund. */
  abstract refundOwed(order: OrderRow): Promise<void>;
}
