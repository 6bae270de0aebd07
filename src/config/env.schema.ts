import { z } from 'zod';
import { hostPortList, trustedRanges } from './address-lists.js';

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const url = (protocols: string[]) =>
  z.string().refine((v) => {
    try {
      return protocols.includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, `must be a URL (${protocols.join(' or ')})`);

/**
 * Holds RESERVATION_MAX_TTL_MS caps. Unset, each defaults to this or to the cap when the cap is
 * lower (a deployment that only shortens the cap means "hold no longer than that"); set above the
 * cap, start-up stops, as every Try without its own timeout would be refused. The cap itself never
 * follows them upward: raising the longest hold is a decision of its own.
 */
const CAPPED_HOLDS = { RESERVATION_TTL_MS: 900_000, PARTICIPANT_TTL_MS: 900_000 } as const;

/** The variables, as given (the capped holds' defaults depend on another variable: see envSchema). */
const variables = z.object({
  PORT: int(0, 65535).default(3000),
  DATABASE_URL: url(['postgres:', 'postgresql:']).default('postgres://postgres@localhost:5432/tcc'),
  DB_POOL_SIZE: int(1, 500).default(20),
  /** What needs a session (migrations, SQL functions, job election): a direct connection when DATABASE_URL is a pooler. Unset: DATABASE_URL. */
  DATABASE_DIRECT_URL: url(['postgres:', 'postgresql:']).optional(),
  /** A streaming replica for the read routes (database/replica-reads.ts). Unset: every read on the primary. */
  DATABASE_READ_URL: url(['postgres:', 'postgresql:']).optional(),
  READ_REPLICA_MAX_LAG_MS: int(0, 3_600_000).default(1000),
  REDIS_URL: url(['redis:', 'rediss:']).default('redis://localhost:6379'),
  /** Instead of REDIS_URL: a Redis Cluster's seed nodes, or a Sentinel group and its master's name (jobs/redis.ts connects). */
  REDIS_CLUSTER_NODES: hostPortList.optional(),
  REDIS_SENTINELS: hostPortList.optional(),
  REDIS_SENTINEL_MASTER: z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be 1-128 chars of [A-Za-z0-9_.:-]').optional(),
  TRUST_PROXY: trustedRanges.optional(),
  QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1-64 chars of [A-Za-z0-9_.:-]').default('tcc'),
  ROLE: z.enum(['api', 'worker', 'all']).default('all'),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').max(512).optional(),
  PAYMENT_GATEWAY_URL: url(['http:', 'https:']).default('http://localhost:4000'),
  PAYMENT_TIMEOUT_MS: int(1, 600_000).default(3000),
  RESERVATION_TTL_MS: int(1000, 30 * 24 * 3600_000).optional(),
  CONFIRM_MAX_ATTEMPTS: int(1, 100).default(5),
  CONFIRM_RETRY_BASE_MS: int(1, 3_600_000).default(1000),
  BREAKER_ERROR_THRESHOLD_PERCENT: int(1, 100).default(50),
  BREAKER_RESET_TIMEOUT_MS: int(1, 3_600_000).default(30_000),
  BREAKER_VOLUME_THRESHOLD: int(0, 100_000).default(10),
  RESERVATION_MAX_TTL_MS: int(1000, 30 * 24 * 3600_000).default(3_600_000),
  PARTICIPANT_TTL_MS: int(1000, 30 * 24 * 3600_000).optional(),
  ALLOCATION_STRATEGY: z.enum(['priority', 'fewest-locations']).default('priority'),
  AUTHORIZATION_MARGIN_MS: int(0, 30 * 24 * 3600_000).default(600_000),
  REFUND_ALERT_AFTER_MS: int(1, 30 * 24 * 3600_000).default(600_000),
  RATE_LIMIT_PER_MINUTE: int(0, 10_000_000).default(0),
  CUSTOMER_MAX_HOLDING_ORDERS: int(0, 1_000_000).default(0),
  WEBHOOK_MAX_ATTEMPTS: int(1, 100).default(12),
  WEBHOOK_RETRY_BASE_MS: int(1, 3_600_000).default(5000),
  /** How long a webhook attempt waits for its 2xx: the contract's 5 s, shorter in tests (a delivery's lease and its job's lock are 3 ×). */
  WEBHOOK_DELIVERY_TIMEOUT_MS: int(100, 60_000).default(5000),
  /** `required`: every checkout route needs a credential with the scope `checkout` (API.md, "Checkout routes"). */
  CHECKOUT_AUTH: z.enum(['open', 'required']).default('open'),
  CONSOLE_SESSION_TTL_MS: int(60_000, 30 * 24 * 3600_000).default(28_800_000),
  OPS_PORT: int(0, 65535).optional(),
  RETENTION_DAYS: int(0, 36_500).default(30),

  // Internal knobs (not part of the public contract).
  SWEEP_INTERVAL_MS: int(50, 600_000).default(5000),
  /** How often the worker compares orders sent to the gateway with the gateway's record. */
  RECONCILE_INTERVAL_MS: int(1000, 86_400_000).default(300_000),
  /** How often retention deletes a round of old rows. */
  RETENTION_INTERVAL_MS: int(1000, 86_400_000).default(600_000),
  /** The window of the credential throttle (5 wrong credentials per address and window): the contract's minute, shorter in tests. */
  CREDENTIAL_THROTTLE_WINDOW_MS: int(1000, 3_600_000).default(60_000),
  /** The window of the per-account sign-in throttle (10 wrong passwords per account): the contract's 15 minutes, shorter in tests. */
  ACCOUNT_THROTTLE_WINDOW_MS: int(1000, 3_600_000).default(900_000),
  /** After a release, how long the gateway is still asked for a charge to refund; unset: max(60 s, 10 × PAYMENT_TIMEOUT_MS), shorter in tests. */
  REFUND_WATCH_MS: int(1000, 86_400_000).optional(),
  /** How long a request, headers and body, may take to arrive (else 408): the contract's 30 s, shorter in tests. */
  REQUEST_TIMEOUT_MS: int(1000, 600_000).default(30_000),
  /** The window RATE_LIMIT_PER_MINUTE counts in: the contract's minute, shorter in tests. */
  RATE_LIMIT_WINDOW_MS: int(1000, 3_600_000).default(60_000),
  /** Each migration statement and SQL function file once the migrations' lock is held (migrate-cli.ts). */
  MIGRATION_STATEMENT_TIMEOUT_MS: int(1000, 86_400_000).default(30_000),
  /** A claimed step's lease is 2 × PAYMENT_TIMEOUT_MS plus this margin (a refund round's 3 ×); after it another process may take the order again. Shorter in tests. */
  STEP_LEASE_MARGIN_MS: int(100, 600_000).default(5000),
  /**
   * scrypt's cost for the password hashes made from now on, as log2 N: the contract's 2^17 (128 MiB,
   * most of a CPU-second a hash). A hash keeps its own cost (`scrypt$N$r$p$…`), so a sign-in checks
   * every stored password at the cost it was made with, whatever this says. Lower in tests only.
   */
  PASSWORD_HASH_COST: int(12, 20).default(17),
  /** How long a duplicate Try waits for the first one before answering IDEMPOTENCY_IN_PROGRESS. */
  IDEMPOTENCY_WAIT_MS: int(10, 20_000).default(5000),
  /** Group commit: most Trys in one database call, how long a batch waits for company while Trys come fast (common/batcher.ts), calls at once. */
  TRY_BATCH_MAX: int(1, 1000).default(128),
  TRY_BATCH_WINDOW_MS: int(0, 100).default(2),
  TRY_BATCH_IN_FLIGHT: int(1, 64).default(2),
  /** Group commit of Confirm's claims and of order moves: calls at once, each, and the wait for company while they come fast. */
  ORDER_BATCH_IN_FLIGHT: int(1, 64).default(4),
  ORDER_BATCH_WINDOW_MS: int(0, 100).default(2),
  /** Expiry and retry checks are one delayed job per time bucket of this size. */
  SCHEDULE_BUCKET_MS: int(10, 60_000).default(1000),
  /** Let several processes listen on one port (SO_REUSEPORT, Linux): the kernel spreads connections. */
  HTTP_REUSE_PORT: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Log a line for every HTTP request (info), or only for failed ones (status >= 500). */
  LOG_REQUESTS: z.enum(['all', 'errors']).default('all'),
});

/** The contract's environment (API.md), plus a few internal knobs with safe defaults. */
export const envSchema = variables.transform((given, ctx) => {
  const holds = {} as Record<keyof typeof CAPPED_HOLDS, number>;
  for (const [name, fallback] of Object.entries(CAPPED_HOLDS) as [keyof typeof CAPPED_HOLDS, number][]) {
    const value = given[name];
    if (value !== undefined && value > given.RESERVATION_MAX_TTL_MS) ctx.addIssue({ code: 'custom', path: [name], message: 'must not exceed RESERVATION_MAX_TTL_MS' });
    holds[name] = value ?? Math.min(fallback, given.RESERVATION_MAX_TTL_MS);
  }
  redisTopologyIssues(given, ctx);
  return { ...given, ...holds, DATABASE_DIRECT_URL: given.DATABASE_DIRECT_URL ?? given.DATABASE_URL };
});

/** One Redis deployment: a cluster or a Sentinel group (each complete), or neither (REDIS_URL). */
function redisTopologyIssues(given: z.infer<typeof variables>, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (given.REDIS_CLUSTER_NODES && (given.REDIS_SENTINELS || given.REDIS_SENTINEL_MASTER)) issue('REDIS_CLUSTER_NODES', 'set either it or REDIS_SENTINELS, not both');
  if (given.REDIS_SENTINELS && !given.REDIS_SENTINEL_MASTER) issue('REDIS_SENTINEL_MASTER', 'must be set with REDIS_SENTINELS');
  if (given.REDIS_SENTINEL_MASTER && !given.REDIS_SENTINELS) issue('REDIS_SENTINELS', 'must be set with REDIS_SENTINEL_MASTER');
}

export type Env = z.infer<typeof envSchema>;

export class InvalidEnvError extends Error {}

/** Parses the environment once; a bad value names the variable. Empty strings count as unset. */
export function parseEnv(source: NodeJS.ProcessEnv): Env {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const result = envSchema.safeParse(cleaned);
  if (!result.success) {
    // The message names the variable, never its value (ADMIN_TOKEN, DATABASE_URL's password).
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new InvalidEnvError(`Invalid environment:\n  ${lines.join('\n  ')}`);
  }
  return result.data;
}
