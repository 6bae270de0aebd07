import { statement } from '../../database/db.js';

/** Confirm's claim of a gateway attempt, for a batch of orders: tcc_claim (claim.sql). */
export const CONFIRM_SQL = {
  claim: statement('orders_claim', `SELECT * FROM tcc_claim($1::uuid[], $2::text[], $3::boolean[], $4::float8, $5::text[], $6::text[], $7::text[], $8::text)`),
} as const;
