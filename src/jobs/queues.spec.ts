import { bucketOf, jobId, QUEUES } from './queues.js';
import { queuePrefix } from './redis.js';

describe('bucketOf', () => {
  it('is the end of the bucket a time falls in; a time on a boundary is its own bucket', () => {
    expect(bucketOf(1, 1000)).toBe(1000);
    expect(bucketOf(999, 1000)).toBe(1000);
    expect(bucketOf(1000, 1000)).toBe(1000);
    expect(bucketOf(1001, 1000)).toBe(2000);
    expect(bucketOf(1_700_000_000_123, 5000)).toBe(1_700_000_005_000);
  });

  it('every time of one bucket has the same end, never earlier than the time itself', () => {
    for (let at = 10_000; at < 12_000; at += 37) {
      const end = bucketOf(at, 500);
      expect(end).toBeGreaterThanOrEqual(at);
      expect(end - at).toBeLessThan(500);
      expect(end % 500).toBe(0);
    }
  });
});

describe('jobId', () => {
  it('is deterministic: the same bucket, refund round or attempt is one job however often it is added', () => {
    expect(jobId.expiry(2000)).toBe(jobId.expiry(2000));
    expect(jobId.expiry(2000)).not.toBe(jobId.step(2000));
    expect(jobId.refund('o-1', 5)).toBe('refund-o-1-5');
    expect(jobId.followUp(QUEUES.confirmRetry, 2000, 2100)).toBe('confirm-retry-2000-again-2100');
  });

  it('a webhook attempt carries its endpoint in base64url: BullMQ refuses ":" in ids, and names may hold one', () => {
    const id = jobId.webhook('crm:eu', 'd-1', 3);
    expect(id).toBe(`webhook-d-1-${Buffer.from('crm:eu').toString('base64url')}-3`);
    expect(id).not.toContain(':');
    expect(jobId.webhook('crm:eu', 'd-1', 3)).not.toBe(jobId.webhook('crm:eu', 'd-1', 4));
  });
});

describe('queuePrefix', () => {
  it('keeps QUEUE_PREFIX on one Redis or a Sentinel group: the keys an upgrade finds are the ones it left', () => {
    expect(queuePrefix({ QUEUE_PREFIX: 'tcc', REDIS_CLUSTER_NODES: undefined }, QUEUES.refunds)).toBe('tcc');
  });

  it('on a cluster gives each queue a hash tag of its own: one slot per queue, queues spread over masters', () => {
    const cluster = { QUEUE_PREFIX: 'shop-eu', REDIS_CLUSTER_NODES: [{ host: '10.0.0.1', port: 7000 }] };
    const prefixes = Object.values(QUEUES).map((q) => queuePrefix(cluster, q));
    expect(prefixes).toEqual(['{shop-eu:confirm-retry}', '{shop-eu:reservation-expiry}', '{shop-eu:refunds}', '{shop-eu:webhooks}']);
  });
});
