/**
 * Contract error codes (API.md, "Errors"). Services throw AppError with one of these;
 * the ProblemFilter is the only place that turns a code into an HTTP status.
 */
export const ERROR_CODES = [
  'UNAUTHORIZED',
  'PAYLOAD_TOO_LARGE',
  'MALFORMED_JSON',
  'VALIDATION_FAILED',
  'NOT_FOUND',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_IN_PROGRESS',
  'UNKNOWN_SKU',
  'CURRENCY_MISMATCH',
  'INSUFFICIENT_STOCK',
  'ORDER_CANCELED',
  'ORDER_CONFIRMED',
  'TRANSACTION_CANCELED',
  'TRANSACTION_CONFIRMED',
  'NO_RESERVATION',
  'STOCK_BELOW_RESERVED',
  'SERVICE_UNAVAILABLE',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra problem+json members the contract names (sku, requested, available, errors…). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  static validation(errors: FieldError[]): AppError {
    const detail = errors.map((e) => `${e.field}: ${e.message}`).join('; ');
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
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'MALFORMED_JSON':
    case 'VALIDATION_FAILED':
      return 400;
    case 'NOT_FOUND':
      return 404;
    case 'IDEMPOTENCY_KEY_REUSED':
    case 'UNKNOWN_SKU':
    case 'CURRENCY_MISMATCH':
      return 422;
    case 'IDEMPOTENCY_IN_PROGRESS':
    case 'INSUFFICIENT_STOCK':
    case 'ORDER_CANCELED':
    case 'ORDER_CONFIRMED':
    case 'TRANSACTION_CANCELED':
    case 'TRANSACTION_CONFIRMED':
    case 'NO_RESERVATION':
    case 'STOCK_BELOW_RESERVED':
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
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  422: 'Unprocessable Content',
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

export function toProblem(code: ErrorCode, detail: string, extra: Record<string, unknown> = {}): Problem {
  const status = statusOf(code);
  return {
    type: `https://tcc-inventory.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    ...extra,
  };
}
