import { Type } from '@sinclair/typebox';

const Check = Type.Object({ status: Type.Union([Type.Literal('up'), Type.Literal('down'), Type.Literal('degraded')]) });

/** What /health, /health/ready and /health/live answer with 200 (a 503 is a SERVICE_UNAVAILABLE problem naming the checks). */
export const HealthBody = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  checks: Type.Optional(Type.Object({ postgres: Check, redis: Check })),
});
