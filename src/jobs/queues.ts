/** Every queue and the one job name each carries. Jobs carry only the order id. */
export const QUEUES = {
  confirmRetry: 'confirm-retry',
  reservationExpiry: 'reservation-expiry',
  refunds: 'refunds',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export interface OrderJob {
  orderId: string;
}

/** Deterministic ids: the same step of the same order is one job, however often it is added. */
export const jobId = {
  /** Keyed by the due time too: a deferral (breaker open, lookup failed) keeps the attempt count. */
  retry: (orderId: string, attempt: number, dueAt: Date) => `retry-${orderId}-${attempt}-${dueAt.getTime()}`,
  expiry: (orderId: string) => `expiry-${orderId}`,
  /** Keyed by the round's due time: a refund re-opened later is a new job, a duplicate add is not. */
  refund: (orderId: string, dueAt: Date) => `refund-${orderId}-${dueAt.getTime()}`,
};
