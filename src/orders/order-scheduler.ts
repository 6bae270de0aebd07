/**
 * What the coordinator asks of the background machinery, always after the state it acts on has
 * committed. Implementations only accelerate, at a cost per time bucket rather than per order: if
 * a call is lost (Redis down, a crash right after commit), the Postgres sweeper finds the orders
 * by their stored times and drives them on. So the calls never reject: an implementation that
 * cannot schedule says so in its own log, bounded, and leaves the work to the sweeper.
 */
export abstract class OrderScheduler {
  /** Reservations made now expire at `at`: check for expired orders then. */
  abstract expiryDue(at: Date): Promise<void>;
  /** A holding order's next retry, lookup or expiry decision is due at `at`. */
  abstract stepDue(at: Date): Promise<void>;
  /** A released order may have been charged: check and refund, now or at `at`. */
  abstract refundOwed(orderId: string, at?: Date | null): Promise<void>;
}
