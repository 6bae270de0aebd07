import { statement } from '../database/db.js';

/**
 * What a location holds now ($2 holding states, $3 a reserved branch): what taking it offline
 * affects. Holding orders are few (a partial index keeps them); their allocations are in their items.
 */
export const LOCATION_USAGE_SQL = statement(
  'location_usage',
  `SELECT l.id AS "locationId",
          (SELECT count(*) FROM orders o
            WHERE o.status = ANY ($2::text[])
              AND EXISTS (SELECT 1 FROM jsonb_array_elements(o.items) AS line, jsonb_array_elements(line->'allocations') AS a
                           WHERE a->>'locationId' = l.id))::int AS "holdingOrders",
          (SELECT count(DISTINCT b.transaction_id) FROM participant_branches b JOIN reservations r ON r.transaction_id = b.transaction_id
            WHERE b.status = $3 AND r.location_id = l.id)::int AS "reservedBranches",
          (SELECT count(*) FROM stock st WHERE st.location_id = l.id AND st.on_hand > 0)::int AS "skusWithStock",
          (SELECT coalesce(sum(st.reserved), 0) FROM stock st WHERE st.location_id = l.id)::int AS "reservedUnits"
     FROM locations l WHERE l.id = $1`,
);
