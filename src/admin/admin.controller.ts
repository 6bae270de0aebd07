import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ActorParam, type Actor } from '../http/actor.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { NoBody, Reason } from '../http/schemas.js';
import { BodyPipe, QueryPipe } from '../http/validation.js';
import { AdminOrder, AdminService } from './admin.service.js';
import { AdminOrder as AdminOrderSchema, BulkCancelBody, BulkCancelResult, GatewayPayments, ListOrdersQuery, OrderCounts, OrderCountsQuery, OrderPage, Timeline } from './admin.schemas.js';
import type { GatewayPayment } from '../payments/gateway.types.js';

const ADMIN_ORDER = ref('AdminOrder', AdminOrderSchema);

@ApiTags('admin')
@Controller('admin/orders')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  @Get()
  @ApiOperation({ operationId: 'listOrders', summary: 'Orders, oldest first (or newest first with sort=newest), filtered and paginated' })
  @ApiJson(200, ref('OrderPage', OrderPage))
  @ApiErrors('UNAUTHORIZED', 'VALIDATION_FAILED')
  list(@Query(new QueryPipe(ListOrdersQuery)) q: ListOrdersQuery): Promise<{ data: AdminOrder[]; nextCursor: string | null }> {
    return this.admin.list(q);
  }

  @Get('counts')
  @ApiOperation({ operationId: 'countOrders', summary: 'How many orders the filters match, in all and per status' })
  @ApiJson(200, ref('OrderCounts', OrderCounts))
  @ApiErrors('UNAUTHORIZED', 'VALIDATION_FAILED')
  counts(@Query(new QueryPipe(OrderCountsQuery)) q: OrderCountsQuery): Promise<{ total: number; byStatus: Record<string, number> }> {
    return this.admin.counts(q);
  }

  @Post('bulk-cancel')
  @HttpCode(200)
  @ApiOperation({ operationId: 'bulkCancelOrders', summary: 'Force-cancel every holding order a filter matches (at most 1000 a call); dryRun only counts' })
  @ApiJsonBody(BulkCancelBody)
  @ApiJson(200, ref('BulkCancelResult', BulkCancelResult))
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED')
  bulkCancel(@Body(new BodyPipe(BulkCancelBody)) body: BulkCancelBody, @ActorParam() actor: Actor): Promise<{ matched: number; canceled: string[] }> {
    return this.admin.bulkCancel(body, actor);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getAdminOrder', summary: 'An order with what operators need (next action, refund status, attention)' })
  @ApiJson(200, ADMIN_ORDER)
  @ApiErrors('UNAUTHORIZED', 'NOT_FOUND')
  get(@Param('id') id: string): Promise<AdminOrder> {
    return this.admin.view(id);
  }

  @Post(':id/force-confirm')
  @HttpCode(200)
  @ApiOperation({ operationId: 'forceConfirmOrder', summary: 'The operator states the order is paid: commit the stock, CONFIRM_SUCCESS' })
  @ApiJsonBody(Reason)
  @ApiJson(200, ADMIN_ORDER)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND', 'ORDER_CANCELED')
  forceConfirm(@Param('id') id: string, @Body(new BodyPipe(Reason)) body: { reason: string }, @ActorParam() actor: Actor): Promise<AdminOrder> {
    return this.admin.forceConfirm(id, body.reason, actor);
  }

  @Post(':id/force-cancel')
  @HttpCode(200)
  @ApiOperation({ operationId: 'forceCancelOrder', summary: 'Cancel as an operator, recording the reason' })
  @ApiJsonBody(Reason)
  @ApiJson(200, ADMIN_ORDER)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND', 'ORDER_CONFIRMED')
  forceCancel(@Param('id') id: string, @Body(new BodyPipe(Reason)) body: { reason: string }, @ActorParam() actor: Actor): Promise<AdminOrder> {
    return this.admin.forceCancel(id, body.reason, actor);
  }

  @Post(':id/retry-now')
  @HttpCode(200)
  @ApiOperation({ operationId: 'retryOrderNow', summary: 'A CONFIRM_PENDING order runs its next step (retry or lookup) now' })
  @ApiJsonBody(NoBody, false)
  @ApiJson(200, ADMIN_ORDER)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND', 'ORDER_CONFIRMED', 'ORDER_CANCELED')
  retryNow(@Param('id') id: string, @Body(new BodyPipe(NoBody)) _body: NoBody, @ActorParam() actor: Actor): Promise<AdminOrder> {
    return this.admin.retryNow(id, actor);
  }

  @Post(':id/acknowledge')
  @HttpCode(200)
  @ApiOperation({ operationId: 'acknowledgeOrder', summary: 'An operator has looked at an order that needed attention' })
  @ApiJsonBody(Reason)
  @ApiJson(200, ADMIN_ORDER)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND')
  acknowledge(@Param('id') id: string, @Body(new BodyPipe(Reason)) body: { reason: string }, @ActorParam() actor: Actor): Promise<AdminOrder> {
    return this.admin.acknowledge(id, body.reason, actor);
  }

  @Get(':id/payment')
  @ApiOperation({ operationId: 'orderPayment', summary: 'What the payment gateway holds for the order (captured and refunded amounts); asks the gateway, changes nothing' })
  @ApiJson(200, ref('GatewayPayments', GatewayPayments))
  @ApiErrors('UNAUTHORIZED', 'NOT_FOUND')
  payment(@Param('id') id: string): Promise<{ data: GatewayPayment[] }> {
    return this.admin.payments(id);
  }

  @Get(':id/events')
  @ApiOperation({ operationId: 'orderTimeline', summary: "The order's timeline: every state change, gateway call, retry and operator action" })
  @ApiJson(200, ref('Timeline', Timeline))
  @ApiErrors('UNAUTHORIZED', 'NOT_FOUND')
  async events(@Param('id') id: string): Promise<{ data: unknown[] }> {
    return { data: await this.admin.events(id) };
  }
}
