import { statement } from '../../database/db.js';

/** The background authorization step's claim. State lists are parameters. */
export const AUTHORIZATION_SQL = {
  /**
   * Claims the next authorization attempt (or lookup) of a holding order whose authorization is
   * unsettled, once it is due and no step runs on it, before its TTL (the expiry decides after it):
   * a lease of $2 ms, and the next step pushed out by as long (should this process die, the order
   * is due again when the lease ends).
   */
  claim: statement(
    'orders_claim_authorization',
    `UPDATE orders SET lease_until = now() + make_interval(secs => $2::float8 / 1000),
                       next_action_at = now() + make_interval(secs => $2::float8 / 1000)
      WHERE id = $1 AND status = ANY ($3::text[]) AND payment_status = ANY ($4::text[]) AND reservation_expires_at > now()
        AND (lease_until IS NULL OR lease_until <= now()) AND next_action_at <= now()
      RETURNING amount_minor, currency, payment_key, payment_token, authorize_attempts`,
  ),
} as const;
