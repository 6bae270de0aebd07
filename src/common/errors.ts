/**
 * Contract error codes (API.md, "Errors"). Services throw AppError with one of these;
 * the ProblemFilter is the only place that turns a code into an HTTP status.
 */
export const ERROR_CODES = [
  'UNAUTHORIZED',
  'FORBIDDEN',
  'RATE_LIMITED',
  'PAYLOAD_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'MALFORMED_JSON',
  'VALIDATION_FAILED',
  'NOT_FOUND',
  'OPERATOR_EXISTS',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_IN_PROGRESS',
  'HOLD_LIMIT_REACHED',
  'UNKNOWN_SKU',
  'UNKNOWN_LOCATION',
  'CURRENCY_MISMATCH',
  'INSUFFICIENT_STOCK',
  'ORDER_CANCELED',
  'ORDER_CONFIRMED',
  'TRANSACTION_CANCELED',
  'TRANSACTION_CONFIRMED',
  'NO_RESERVATION',
  'EXTENSION_LIMIT_REACHED',
  'STOCK_BELOW_RESERVED',
  'STOCK_CHANGED',
  'SERVICE_UNAVAILABLE',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface FieldError {
  field: string;
  message: string;
  /** A CSV import's row: its line in the file, the header being line 1. */
  line?: number;
}

/**
 * A contract outcome, not a crash: thrown on hot paths (a sold-out SKU answers thousands of these a
 * second), so it skips the stack trace nobody reads.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra problem+json members the contract names (sku, requested, available, errors…). */
    readonly extra: Record<string, unknown> = {},
    /** Where the contract answers this code with another status (UNKNOWN_SKU is 409 on /tcc/*). */
    readonly status?: number,
  ) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
  }

  static validation(errors: FieldError[]): AppError {
    const detail = errors.map((e) => `${e.field}${e.line ? ` (line ${e.line})` : ''}: ${e.message}`).join('; ');
    return new AppError('VALIDATION_FAILED', detail || 'request failed validation', { errors });
  }

  static notFound(what: string): AppError {
    return new AppError('NOT_FOUND', `${what} not found`);
  }
}

/** Exhaustive: adding a code without a status is a compile error. */
export function statusOf(code: ErrorCode): number {
  switch (code) {
    case 'UNAUTHORIZED':
      return 401;
    case 'FORBIDDEN':
      return 403;
    case 'RATE_LIMITED':
      return 429;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'REQUEST_TIMEOUT':
      return 408;
    case 'MALFORMED_JSON':
    case 'VALIDATION_FAILED':
      return 400;
    case 'NOT_FOUND':
      return 404;
    case 'IDEMPOTENCY_KEY_REUSED':
    case 'UNKNOWN_SKU':
    case 'UNKNOWN_LOCATION':
    case 'CURRENCY_MISMATCH':
      return 422;
    case 'OPERATOR_EXISTS':
    case 'IDEMPOTENCY_IN_PROGRESS':
    case 'HOLD_LIMIT_REACHED':
    case 'INSUFFICIENT_STOCK':
    case 'ORDER_CANCELED':
    case 'ORDER_CONFIRMED':
    case 'TRANSACTION_CANCELED':
    case 'TRANSACTION_CONFIRMED':
    case 'NO_RESERVATION':
    case 'EXTENSION_LIMIT_REACHED':
    case 'STOCK_BELOW_RESERVED':
    case 'STOCK_CHANGED':
      return 409;
    case 'SERVICE_UNAVAILABLE':
      return 503;
    case 'INTERNAL':
      return 500;
  }
}

const TITLES: Partial<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  [extra: string]: unknown;
}

/** Each code's problem type, made once: a refusal on a sold-out SKU is answered thousands of times a second. */
const PROBLEM_TYPES = Object.fromEntries(ERROR_CODES.map((c) => [c, `https://tcc-inventory.dev/problems/${c.toLowerCase().replace(/_/g, '-')}`])) as Record<ErrorCode, string>;

export function toProblem(code: ErrorCode, detail: string, extra: Record<string, unknown> = {}, status = statusOf(code)): Problem {
  return {
    type: PROBLEM_TYPES[code],
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    ...extra,
  };
}
