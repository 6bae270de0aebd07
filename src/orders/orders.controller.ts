import { Body, Controller, Get, Headers, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AppError } from '../common/errors.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../common/validation.js';
import { CheckoutService } from './checkout.service.js';
import { ConfirmService } from './confirm.service.js';
import { confirmHttpStatus } from './order-state.js';
import { OrderView, toOrderView } from './order.types.js';
import { ConfirmOrderDto, CreateOrderDto, OrderViewDto } from './orders.dto.js';

@ApiTags('checkout')
@Controller('orders')
export class OrdersController {
  constructor(
    private readonly checkout: CheckoutService,
    private readonly confirmation: ConfirmService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Try: reserve stock for every line, all or nothing' })
  @ApiHeader({ name: 'Idempotency-Key', required: true, description: '1-255 chars of [A-Za-z0-9_.:-]' })
  @ApiResponse({ status: 201, type: OrderViewDto })
  @ApiResponse({ status: 200, type: OrderViewDto, description: 'replay of the same key and body' })
  async create(
    @Body() body: CreateOrderDto,
    @Headers('idempotency-key') key: string | undefined,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<OrderView> {
    if (!key || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw AppError.validation([{ field: 'Idempotency-Key', message: 'header required: 1-255 characters of [A-Za-z0-9_.:-]' }]);
    }
    const { order, created } = await this.checkout.try(key, body, req.body);
    res.status(created ? 201 : 200);
    return toOrderView(order);
  }

  @Get(':id')
  @ApiResponse({ status: 200, type: OrderViewDto })
  async get(@Param('id') id: string): Promise<OrderView> {
    return toOrderView(await this.checkout.get(id));
  }

  @Post(':id/confirm')
  @ApiOperation({ summary: 'Confirm: charge the payment, then commit the stock' })
  @ApiResponse({ status: 200, type: OrderViewDto, description: 'CONFIRM_SUCCESS' })
  @ApiResponse({ status: 202, type: OrderViewDto, description: 'CONFIRM_PENDING: retries scheduled' })
  @ApiResponse({ status: 402, type: OrderViewDto, description: 'PAY_FAILED: stock released' })
  async confirm(@Param('id') id: string, @Body() body: ConfirmOrderDto, @Res({ passthrough: true }) res: Response): Promise<OrderView> {
    const order = await this.confirmation.confirm(id, body.paymentToken);
    if (!order) throw AppError.notFound(`order ${id}`);
    const status = confirmHttpStatus(order.status);
    if (status === 'ORDER_CANCELED') throw new AppError('ORDER_CANCELED', `order ${id} was canceled`);
    res.status(status);
    return toOrderView(order);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel: release the stock (and refund a charge, if any)' })
  @ApiResponse({ status: 200, type: OrderViewDto })
  async cancel(@Param('id') id: string): Promise<OrderView> {
    return toOrderView(await this.checkout.cancel(id, 'canceled by the client', { actor: 'client' }));
  }
}
