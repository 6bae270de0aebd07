import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import { isUuid } from '../common/uuid.js';
import type { FastAnswer } from '../http/fast-path.js';
import { problemOf } from '../http/problem.js';
import { validateBody } from '../http/validation.js';
import { ConfirmService } from './confirm/confirm.service.js';
import { ConfirmBody } from './orders.schemas.js';
import { confirmHttpStatus } from './state/order-state.js';
import { TryEngine } from './try/try-engine.js';
import { tryRequestOf } from './try/try-input.js';

/** What a checkout route answers: a status and JSON text (an order, or a problem when `problem`). */
export type Answer = FastAnswer;

const order = (status: number, body: string): Answer => ({ status, body, problem: false });

/** A refusal returned as a value (see TryAnswer), answered as the filter would answer it thrown. */
export function refusal(err: AppError): Answer {
  const p = problemOf(err);
  return { status: p.status, body: JSON.stringify(p), problem: true };
}

/**
 * Try and Confirm from a request's parts to its answer, whoever serves the request: the Nest
 * controller, or the fast path that answers these two routes straight from node:http
 * (http/fast-path.ts). Bad input and failures still throw (AppError, or a database error), for
 * the caller's one error mapping (http/problem.ts); a Try's refusal is returned.
 */
@Injectable()
export class OrderAnswers {
  constructor(
    private readonly engine: TryEngine,
    private readonly confirmation: ConfirmService,
  ) {}

  /** POST /orders: reserve every line or nothing, once per Idempotency-Key (see TryEngine). */
  async tryOrder(key: string | string[] | undefined, raw: unknown): Promise<Answer> {
    const result = await this.engine.reserve(tryRequestOf(key, raw));
    if (result instanceof AppError) return refusal(result);
    return order(result.created ? 201 : 200, result.body);
  }

  /** POST /orders/{id}/confirm: the current state by one mapping (API.md): 200, 202, 402, or ORDER_CANCELED. */
  async confirmOrder(id: string, raw: unknown, requestId: string | undefined): Promise<Answer> {
    const body = validateBody(ConfirmBody, raw);
    const answer = isUuid(id) ? await this.confirmation.confirm(id, body.paymentToken, requestId) : undefined;
    if (!answer) throw AppError.notFound(`order ${id}`);
    const status = confirmHttpStatus(answer.status);
    if (status === 'ORDER_CANCELED') throw new AppError('ORDER_CANCELED', 'the order was canceled');
    return order(status, answer.body);
  }
}
