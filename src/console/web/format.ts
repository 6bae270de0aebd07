/** How the page writes money, times and states. */

const digitsCache = new Map<string, number>();

function fractionDigits(currency: string): number {
  let digits = digitsCache.get(currency);
  if (digits === undefined) {
    try {
      digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    } catch {
      digits = 2;
    }
    digitsCache.set(currency, digits);
  }
  return digits;
}

/** Minor units as the currency writes them: 2500 USD → "$25.00". */
export function money(minor: number, currency: string): string {
  const digits = fractionDigits(currency);
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(minor / 10 ** digits);
  } catch {
    return `${minor} ${currency} (minor units)`;
  }
}

/** An ISO time as "2026-11-02 14:03:07 UTC": operators compare times across regions and logs. */
export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** The same without the zone, for table cells whose column header says UTC. */
export function shortTime(iso: string | null | undefined): string {
  return time(iso).replace(/ UTC$/, '');
}

export function orDash(value: unknown): string {
  return value === null || value === undefined || value === '' ? '—' : String(value);
}

export { ORDER_STATUSES } from '../../orders/state/order-state.js';

export const BREAKER_TEXT: Record<string, string> = { closed: 'closed', half_open: 'half-open', open: 'open' };
