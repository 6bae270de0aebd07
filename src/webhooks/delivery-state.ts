/** A webhook delivery's states, in one place: pending until delivered, or failed after the last attempt. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Deliveries that will not be sent again on their own (retention may delete them). */
export const FINISHED_DELIVERIES: readonly DeliveryStatus[] = ['delivered', 'failed'];
