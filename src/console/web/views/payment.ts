import { api, ApiError, seg } from '../api.js';
import { h, show } from '../dom.js';
import { money } from '../format.js';
import type { AdminOrder, GatewayPayment } from '../types.js';
import { copyButton } from '../widgets.js';

/** What is known of an order's payment at the gateway, for the page and for a force action's confirmation. */
export type PaymentState =
  | { kind: 'loading' }
  | { kind: 'not-sent' }
  | { kind: 'unavailable'; why: string }
  | { kind: 'known'; payments: GatewayPayment[] };

/** The gateway can hold a payment only for an order that reached it (or may have: a pending one). */
const reachedGateway = (o: AdminOrder) => o.status === 'CONFIRM_PENDING' || o.confirmAttempts > 0 || o.paymentId !== null || o.refundStatus !== null || o.payment !== null;

/** Why the gateway could not be asked, in words (the 503's `reason`, its status in the detail). */
function whyNot(err: ApiError): string {
  const status = /answered (\d{3})/.exec(err.message)?.[1];
  switch (err.problem.reason) {
    case 'circuit_open':
      return 'the payment breaker is open: after repeated failures the service stops calling the gateway for a while';
    case 'timeout':
      return 'the gateway did not answer in time';
    case 'refused':
      return 'the gateway refused the look-up';
    default:
      return status ? `the gateway answered with an error (HTTP ${status})` : err.status === 0 ? err.message : 'the gateway did not answer';
  }
}

/** Money the gateway captured and kept for the order (succeeded payments, less refunds). */
function captured(payments: GatewayPayment[]): { minor: number; currency: string } | undefined {
  const kept = payments.filter((p) => p.status === 'succeeded');
  if (kept.length === 0) return undefined;
  return { minor: kept.reduce((sum, p) => sum + (p.capturedMinor ?? p.amountMinor) - p.refundedMinor, 0), currency: kept[0].currency };
}

/**
 * The order's "Payment": what the gateway holds for it (id, captured and refunded amounts), asked
 * when the order changes or the last ask failed, so a refresh shows the payment once the gateway
 * answers again. A separate piece: other sources of payment facts slot in beside the gateway's.
 */
export function paymentBlock(orderId: string) {
  const element = h('div', null, h('p', { class: 'hint' }, 'Loading…'));
  let state: PaymentState = { kind: 'loading' };
  let askedFor: string | undefined;
  let last: AdminOrder | undefined;

  async function load(o: AdminOrder, force = false): Promise<void> {
    last = o;
    if (!reachedGateway(o)) {
      state = { kind: 'not-sent' };
      return void show(element, h('p', { class: 'hint' }, 'The order has not reached the payment gateway: nothing was charged.'));
    }
    if (!force && askedFor === o.updatedAt && state.kind === 'known') return;
    askedFor = o.updatedAt;
    try {
      const r = await api<{ data: GatewayPayment[] }>('GET', `/admin/orders/${seg(orderId)}/payment`);
      state = { kind: 'known', payments: r.data };
      showPayments(r.data);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      const why = err instanceof ApiError ? whyNot(err) : (err as Error).message;
      state = { kind: 'unavailable', why };
      show(
        element,
        h(
          'div',
          { class: 'message error', role: 'status' },
          h('p', null, h('strong', null, 'The gateway cannot be asked now: '), `${why}. Whether the customer was charged is not known.`),
          h('p', null, 'The page asks again as it refreshes. ', h('button', { type: 'button', class: 'small', onclick: () => last && void load(last, true) }, 'Ask again')),
        ),
      );
    }
  }

  function showPayments(list: GatewayPayment[]): void {
    if (list.length === 0) return void show(element, h('p', { class: 'hint' }, 'The gateway holds no payment for this order.'));
    const sum = captured(list);
    show(
      element,
      h('p', null, sum ? `The gateway holds a captured payment of ${money(sum.minor, sum.currency)}.` : 'The gateway holds no captured payment.'),
      h(
        'div',
        { class: 'table-wrap', tabindex: 0, role: 'group', 'aria-label': 'Payments table' },
        h(
          'table',
          { class: 'payments' },
          h('thead', null, h('tr', null, [['Payment id'], ['Status'], ['Captured', 'num'], ['Refunded', 'num']].map(([c, cls]) => h('th', { scope: 'col', class: cls }, c)))),
          h(
            'tbody',
            null,
            list.map((p) =>
              h(
                'tr',
                null,
                h('td', null, h('code', null, p.id), ' ', copyButton(p.id, 'payment id')),
                h('td', null, p.status),
                h('td', { class: 'num' }, money(p.status === 'succeeded' ? (p.capturedMinor ?? p.amountMinor) : 0, p.currency)),
                h('td', { class: 'num' }, money(p.refundedMinor, p.currency)),
              ),
            ),
          ),
        ),
      ),
    );
  }

  /** What a force action's confirmation says of the payment. */
  function note(action: 'confirm' | 'cancel'): string {
    switch (state.kind) {
      case 'loading':
        return 'The payment is still being checked: wait for "Payment" above.';
      case 'unavailable':
        return 'The payment could not be checked: the gateway cannot be asked now.';
      case 'not-sent':
        return action === 'confirm' ? 'It never reached the gateway: confirm only when it was paid outside the gateway.' : 'It never reached the gateway: nothing was charged.';
      case 'known': {
        const sum = captured(state.payments);
        if (!sum || sum.minor === 0)
          return action === 'confirm' ? 'The gateway holds no captured payment for it: confirm only when it was paid outside the gateway.' : 'The gateway holds no captured payment for it.';
        const held = `The gateway holds a captured payment of ${money(sum.minor, sum.currency)} for it.`;
        return action === 'cancel' ? `${held} Canceling refunds it.` : held;
      }
    }
  }

  return { element, load, note };
}
