import type { TimelineEvent } from '../types.js';
import { attentionReason } from './attention.js';

const event = (type: string, at: string, data: Record<string, unknown> = {}): TimelineEvent => ({ type, at, data }) as TimelineEvent;

describe('attentionReason: why an order needs a human, in an operator\'s words', () => {
  it('a refund that keeps failing says since when, and names no setting', () => {
    const events = [
      event('status.changed', '2026-11-26T11:00:00Z', { to: 'CANCELED' }),
      event('refund.failed', '2026-11-26T11:00:05Z', { attempt: 1 }),
      event('refund.failed', '2026-11-26T11:03:00Z', { attempt: 2 }),
      event('attention.needed', '2026-11-26T11:10:07Z', { reason: 'refund_failing', attempt: 9, detail: 'gateway answered 503' }),
    ];
    const text = attentionReason(events[3], events);
    expect(text).toMatch(/^A refund has kept failing since 2026-11-26 11:00:05 UTC \(.+ ago\), longer than the service waits before it alerts a person, so the customer may still be charged\./);
    expect(text).not.toMatch(/[A-Z]{2,}_[A-Z_]+/); // no environment variable's name
  });

  it('without the failures on the timeline it still says it in words', () => {
    const raised = event('attention.needed', '2026-11-26T11:10:07Z', { reason: 'refund_failing' });
    expect(attentionReason(raised, [raised])).toMatch(/^A refund has kept failing, longer than the service waits before it alerts a person/);
  });
});
