import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import { isUuid } from '../common/uuid.js';
import type { FastAnswer } from '../http/fast-path.js';
import { problemOf } from '../http/problem.js';
import { validateBody } from '../http/validation.js';
import { ConfirmService } from './confirm/confirm.service.js';
import { ConfirmBody } from './orders.schemas.js';
import { confirmHttpStatus } from './state/order-state.js';
import type { OrderAnswer } from './state/order-store.js';
import type { OrderView } from './state/order.types.js';
import { Authorizations } from './try/authorization.js';
import { TryEngine, TryRequest, TryResult } from './try/try-engine.js';
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
  private readonly logger = new Logger(OrderAnswers.name);

  constructor(
    private readonly engine: TryEngine,
    private readonly confirmation: ConfirmService,
    private readonly authorizations: Authorizations,
  ) {}

  /** POST /orders: reserve every line or nothing, once per Idempotency-Key (see TryEngine). */
  async tryOrder(key: string | string[] | undefined, raw: unknown, requestId?: string): Promise<Answer> {
    const req = tryRequestOf(key, raw);
    const result = await this.engine.reserve(req);
    if (result instanceof AppError) return refusal(result);
    if (req.paymentToken === undefined) return order(result.created ? 201 : 200, result.body);
    return this.withPayment(req as TryRequest & { paymentToken: string }, result, requestId);
  }

  /**
   * A Try that holds its payment: the stock is committed; now its authorization (API.md "Payment
   * held at Try"). A PAY_FAILED order (declined) answers 402 — its replays too; a replay whose
   * authorization is still in flight waits for it.
   */
  private async withPayment(req: TryRequest & { paymentToken: string }, result: TryResult, requestId: string | undefined): Promise<Answer> {
    const o = JSON.parse(result.body) as OrderView;
    let answer: OrderAnswer = { status: o.status, body: result.body };
    if (o.payment?.status === 'authorizing') {
      answer = result.created
        ? await this.authorizations.atTry({ id: o.id, amountMinor: o.amountMinor, currency: o.currency }, req.paymentToken, requestId).catch((err: unknown) => {
            // The stock is committed and the order exists: its authorization's outcome could not be
            // recorded (the database went away), so it is unknown — settled in the background
            // once its lease ends, as after a crash. The Try answers the order as its batch wrote it.
            this.logger.warn({ orderId: o.id, err: (err as Error).message }, 'the authorization could not be recorded; it is settled in the background');
            return answer;
          })
        : ((await this.authorizations.awaitInFlight(o.id)) ?? answer);
    }
    return order(answer.status === 'PAY_FAILED' ? 402 : result.created ? 201 : 200, answer.body);
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
