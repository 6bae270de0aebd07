import { randomUUID } from 'node:crypto';
import type { Harness } from './harness.js';

/** What the attention specs ask of one harness: orders of one SKU, their admin view, their timeline, the alarm's absence. */
export function attentionProbe(h: Harness, sku: string) {
  const view = async (id: string) => (await h.api.admin('GET', `/admin/orders/${id}`)).body;
  const eventTypes = async (id: string): Promise<string[]> => (await h.api.admin('GET', `/admin/orders/${id}/events`)).body.data.map((e: { type: string }) => e.type);
  return {
    view,
    eventTypes,
    async order(): Promise<string> {
      const res = await h.api.order(randomUUID(), { customerId: 'c-alarm', items: [{ sku, quantity: 1 }] });
      expect(res.status).toBe(201);
      return res.body.id;
    },
    /** No refund watch, no attention flag, no refund or attention event, not in the needs-attention list. */
    async expectNoAlarm(id: string, status: string): Promise<void> {
      expect(await view(id)).toMatchObject({ status, refundStatus: null, needsAttention: false });
      const types = await eventTypes(id);
      expect(types.filter((t) => t.startsWith('refund.') || t === 'attention.needed')).toEqual([]);
      const flagged = (await h.api.admin('GET', '/admin/orders?needsAttention=true&limit=1000')).body.data.map((o: { id: string }) => o.id);
      expect(flagged).not.toContain(id);
    },
  };
}
