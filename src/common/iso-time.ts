/**
 * An ISO 8601 time as the API takes it: a date, a time to the minute (seconds and fractions
 * optional), and Z or an offset. The schemas take it as their pattern; isIsoTime reads its groups.
 */
export const ISO_TIME_PATTERN = '^(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2})(?::(\\d{2})(?:\\.\\d{1,9})?)?(?:Z|[+-](\\d{2}):(\\d{2}))$';

const ISO_TIME = new RegExp(ISO_TIME_PATTERN);

/**
 * Whether `text` is such a time and names a real moment, as Postgres's timestamptz reads it: the
 * pattern alone lets through 2030-02-30 (which JavaScript's Date.parse rolls over to March) and an
 * offset of +16:00 (beyond Postgres's ±15:59), and Postgres refuses both with an error a request
 * must never reach.
 */
export function isIsoTime(text: string): boolean {
  const parts = ISO_TIME.exec(text);
  if (!parts) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = parts.slice(1).map((v) => Number(v ?? 0));
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && offsetHours <= 15 && offsetMinutes <= 59;
}
