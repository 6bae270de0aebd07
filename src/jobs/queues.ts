/** Every queue and the one job name each carries. Jobs carry only ids and times: Postgres is the truth. */
export const QUEUES = {
  /** Retries, lookups and resumed Confirms: one job per time bucket resolves every order due in it. */
  confirmRetry: 'confirm-retry',
  /** Reservation TTLs: one job per time bucket. */
  reservationExpiry: 'reservation-expiry',
  /** Compensation: one job per order and round. */
  refunds: 'refunds',
  /** Webhook deliveries: one job per delivery and attempt, handed out by the webhook poller. */
  webhooks: 'webhooks',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export interface JobData {
  /** Bucket jobs: the end of the bucket (epoch ms). */
  bucket?: number;
  /** Per-order jobs. */
  orderId?: string;
  /** Webhook attempts: the endpoint, the delivery (its webhook-id) and the attempts made before this one. */
  webhook?: string;
  deliveryId?: string;
  attempt?: number;
}

/** Deterministic ids: the same bucket (or the same refund round) is one job, however often it is added. */
export const jobId = {
  expiry: (bucket: number) => `expiry-${bucket}`,
  step: (bucket: number) => `step-${bucket}`,
  /** A bucket whose orders were not due yet by the database's clock, looked at again. */
  followUp: (name: string, bucket: number, at: number) => `${name}-${bucket}-again-${at}`,
  refund: (orderId: string, dueAt: number) => `refund-${orderId}-${dueAt}`,
  /** BullMQ refuses ':' in ids and webhook names may hold one: the name goes in base64url. */
  webhook: (webhook: string, deliveryId: string, attempt: number) => `webhook-${deliveryId}-${Buffer.from(webhook).toString('base64url')}-${attempt}`,
};

/** The end of the `size`-ms bucket `at` falls in. */
export function bucketOf(at: number, size: number): number {
  return Math.ceil(at / size) * size;
}
