import { Controller, Get, Injectable } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Db } from '../database/db.js';
import { ApiErrors, ApiJson, ref } from '../http/api-docs.js';
import { ORDER_STATUSES, OrderStatus } from '../orders/state/order-state.js';
import { BreakerState, PaymentGateway } from '../payments/payment-gateway.js';
import { CONSOLE_SQL } from './console.sql.js';
import { ConsoleStats as ConsoleStatsSchema } from './console.schemas.js';

export interface Stats {
  ordersByStatus: Record<OrderStatus, number>;
  needingAttention: number;
  breaker: BreakerState;
}

/** The console's figures at a glance: the order counts /metrics exports, and this process's breaker. */
@Injectable()
export class ConsoleStats {
  constructor(
    private readonly db: Db,
    private readonly gateway: PaymentGateway,
  ) {}

  async read(): Promise<Stats> {
    const row = await this.db.read.one<{ by_status: Record<string, string>; needing_attention: string }>(CONSOLE_SQL.stats);
    const ordersByStatus = Object.fromEntries(ORDER_STATUSES.map((s) => [s, Number(row?.by_status[s] ?? 0)])) as Record<OrderStatus, number>;
    return { ordersByStatus, needingAttention: Number(row?.needing_attention ?? 0), breaker: this.gateway.state };
  }
}

@ApiTags('admin')
@Controller('admin/stats')
export class ConsoleStatsController {
  constructor(private readonly stats: ConsoleStats) {}

  @Get()
  @ApiOperation({ operationId: 'adminStats', summary: "Figures at a glance: orders by status, orders needing attention, this process's payment breaker" })
  @ApiJson(200, ref('AdminStats', ConsoleStatsSchema))
  @ApiErrors('UNAUTHORIZED')
  read(): Promise<Stats> {
    return this.stats.read();
  }
}
