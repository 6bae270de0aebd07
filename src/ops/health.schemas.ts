import { Type } from '@sinclair/typebox';

const Check = Type.Object({
  status: Type.Union([Type.Literal('up'), Type.Literal('down'), Type.Literal('degraded')]),
  /** Why a dependency is not up, in its own words (Redis: what its commands answered, e.g. CROSSSLOT, READONLY). */
  reason: Type.Optional(Type.String()),
});

/** DATABASE_READ_URL's replica, when one is set: `degraded` (with why) while reads go to the primary. */
const ReplicaCheck = Type.Object({
  status: Type.Union([Type.Literal('up'), Type.Literal('degraded')]),
  lagMs: Type.Optional(Type.Integer({ description: 'how stale its answers may be, as last measured (ms)' })),
  reason: Type.Optional(Type.String()),
});

/** What /health, /health/ready and /health/live answer with 200 (a 503 is a SERVICE_UNAVAILABLE problem naming the checks). */
export const HealthBody = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  checks: Type.Optional(Type.Object({ postgres: Check, redis: Check, replica: Type.Optional(ReplicaCheck) })),
});
