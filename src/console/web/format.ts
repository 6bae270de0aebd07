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

/**
 * Minor units in major units with the currency's code: 4250 USD → "42.50 USD", 500 JPY → "500 JPY".
 * Digits are grouped by nothing, so the figure reads the same in every locale and copies cleanly.
 */
export function money(minor: number, currency: string): string {
  const digits = fractionDigits(currency);
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  if (digits === 0) return `${sign}${abs} ${currency}`;
  const unit = 10 ** digits;
  return `${sign}${Math.floor(abs / unit)}.${String(abs % unit).padStart(digits, '0')} ${currency}`;
}

/** How far a time is from now, in words: "3 min ago", "in 2 h 5 min", "just now". */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return '';
  const diffS = Math.round((at - now) / 1000);
  const s = Math.abs(diffS);
  if (s < 5) return 'just now';
  let text: string;
  if (s < 60) text = `${s} s`;
  else if (s < 3600) text = `${Math.floor(s / 60)} min`;
  else if (s < 86_400) text = `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
  else text = `${Math.floor(s / 86_400)} d${Math.floor((s % 86_400) / 3600) ? ` ${Math.floor((s % 86_400) / 3600)} h` : ''}`;
  return diffS < 0 ? `${text} ago` : `in ${text}`;
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
