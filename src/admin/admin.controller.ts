import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { OrderStatus } from '../orders/order-state.js';
import { OrderEvent, OrderView, toOrderView } from '../orders/order.types.js';
import { OrderViewDto } from '../orders/orders.dto.js';
import { AdminService } from './admin.service.js';
import { ListOrdersQuery, ReasonDto } from './admin.dto.js';

@ApiTags('admin')
@ApiBearerAuth()
@Controller('admin/orders')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  @Get()
  async list(@Query() q: ListOrdersQuery): Promise<{ data: OrderView[]; nextCursor: string | null }> {
    const page = await this.admin.list(q.status as OrderStatus | undefined, q.limit ? Number(q.limit) : 100, q.cursor);
    return { data: page.data.map(toOrderView), nextCursor: page.nextCursor };
  }

  @Post(':id/force-confirm')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: OrderViewDto })
  async forceConfirm(@Param('id') id: string, @Body() body: ReasonDto): Promise<OrderView> {
    return toOrderView(await this.admin.forceConfirm(id, body.reason));
  }

  @Post(':id/force-cancel')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: OrderViewDto })
  async forceCancel(@Param('id') id: string, @Body() body: ReasonDto): Promise<OrderView> {
    return toOrderView(await this.admin.forceCancel(id, body.reason));
  }

  @Get(':id/events')
  async events(@Param('id') id: string): Promise<{ data: OrderEvent[] }> {
    return { data: await this.admin.events(id) };
  }
}
