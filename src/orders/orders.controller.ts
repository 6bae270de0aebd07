import { Body, Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { PROBLEM_TYPE } from '../http/problem.js';
import { NoBody } from '../http/schemas.js';
import { BodyPipe } from '../http/validation.js';
import { CancelService } from './cancel/cancel.service.js';
import { ReservationExpiry } from './cancel/reservation-expiry.js';
import { Answer, OrderAnswers } from './order-answers.js';
import { ConfirmBody, CreateOrderBody, ExtendBody, Order } from './orders.schemas.js';
import { OrderStore } from './state/order-store.js';

const ORDER = ref('Order', Order);

/** Sends Postgres's order JSON as it is: nothing to parse, nothing to serialize again. */
function json(res: FastifyReply, status: number, body: string): string {
  res.code(status).type('application/json');
  return body;
}

/** A checkout answer (an order, or a problem) as the body of a passthrough reply. */
function send(res: FastifyReply, answer: Answer): string {
  res.code(answer.status).type(answer.problem ? PROBLEM_TYPE : 'application/json');
  return answer.body;
}

@ApiTags('checkout')
@Controller('orders')
export class OrdersController {
  constructor(
    private readonly answers: OrderAnswers,
    private readonly store: OrderStore,
    private readonly expiry: ReservationExpiry,
    private readonly cancels: CancelService,
  ) {}

  @Post()
  @ApiOperation({ operationId: 'tryOrder', summary: 'Try: reserve stock for every line, all or nothing' })
  @ApiHeader({ name: 'Idempotency-Key', required: true, description: '1-255 characters of [A-Za-z0-9_.:-]' })
  @ApiJsonBody(CreateOrderBody)
  @ApiJson(201, ORDER, 'TRY_SUCCESS: every line reserved until reservationExpiresAt (with `payment`: authorized, or authorizing while the outcome is unknown)')
  @ApiJson(200, ORDER, 'a replay of the same key and body: the first order, nothing reserved again')
  @ApiJson(402, ORDER, 'with `payment`: PAY_FAILED, the authorization declined or refused; the stock released (its replays answer the same)')
  @ApiErrors('RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_IN_PROGRESS', 'HOLD_LIMIT_REACHED', 'UNKNOWN_SKU', 'UNKNOWN_LOCATION', 'CURRENCY_MISMATCH', 'INSUFFICIENT_STOCK')
  async create(@Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply): Promise<string> {
    return send(res, await this.answers.tryOrder(req.headers['idempotency-key'], req.body, req.id));
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getOrder', summary: 'An order as it stands' })
  @ApiJson(200, ORDER)
  @ApiErrors('NOT_FOUND')
  async get(@Param('id') id: string, @Res({ passthrough: true }) res: FastifyReply): Promise<string> {
    return json(res, 200, (await this.store.get(id)).body);
  }

  @Post(':id/confirm')
  @ApiOperation({ operationId: 'confirmOrder', summary: 'Confirm: charge the payment, then commit the stock' })
  @ApiJsonBody(ConfirmBody, false)
  @ApiJson(200, ORDER, 'CONFIRM_SUCCESS')
  @ApiJson(202, ORDER, 'TRY_SUCCESS or CONFIRM_PENDING: an attempt is running, retries are scheduled, or (payment held at Try) the authorization is still settling')
  @ApiJson(402, ORDER, 'PAY_FAILED: declined, refused by the gateway, or retries exhausted; stock released')
  @ApiErrors('RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND', 'ORDER_CANCELED')
  async confirm(@Param('id') id: string, @Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply): Promise<string> {
    return send(res, await this.answers.confirmOrder(id, req.body, req.id));
  }

  @Post(':id/extend')
  @HttpCode(200)
  @ApiOperation({ operationId: 'extendOrder', summary: 'Keep the reservation longer (a slow payment page), up to RESERVATION_MAX_TTL_MS from creation' })
  @ApiJsonBody(ExtendBody)
  @ApiJson(200, ORDER, 'TRY_SUCCESS or CONFIRM_PENDING with the new reservationExpiresAt (unchanged when now + extendByMs is not later)')
  @ApiErrors('RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND', 'EXTENSION_LIMIT_REACHED', 'ORDER_CONFIRMED', 'ORDER_CANCELED')
  async extend(@Param('id') id: string, @Body(new BodyPipe(ExtendBody)) body: ExtendBody, @Res({ passthrough: true }) res: FastifyReply): Promise<string> {
    return json(res, 200, (await this.expiry.extend(id, body.extendByMs)).body);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({ operationId: 'cancelOrder', summary: 'Cancel: release the stock (and refund a charge, if any)' })
  @ApiJsonBody(NoBody, false)
  @ApiJson(200, ORDER, 'CANCELED (or already CANCELED / PAY_FAILED)')
  @ApiErrors('RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND', 'ORDER_CONFIRMED')
  async cancel(@Param('id') id: string, @Body(new BodyPipe(NoBody)) _body: NoBody, @Res({ passthrough: true }) res: FastifyReply): Promise<string> {
    return json(res, 200, (await this.cancels.cancel(id, 'canceled by the client', { data: { actor: 'client' } })).body);
  }
}

