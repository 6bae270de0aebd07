import type { AttemptRef } from './webhook-delivery.js';

/**
 * What the webhook poller asks of the background machinery: hand these attempts to the workers.
 * Only a way to spread the sending: an attempt that is lost waits out its delivery's lease and
 * is claimed again, and when the hand-over fails the poller sends the attempts itself.
 */
export abstract class WebhookScheduler {
  abstract webhookAttempts(refs: AttemptRef[]): Promise<void>;
}
