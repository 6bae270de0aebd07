import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AppError } from '../common/errors.js';
import { SKU_PATTERN } from '../common/validation.js';
import { Db } from '../database/db.js';
import { InventoryService, InventoryView } from './inventory.service.js';
import { InventoryViewDto, TccStatusDto, TccTransactionDto, TccTryDto, UpsertSkuDto } from './inventory.dto.js';

@ApiTags('inventory')
@Controller()
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Get('inventory/:sku')
  @ApiResponse({ status: 200, type: InventoryViewDto })
  async get(@Param('sku') sku: string): Promise<InventoryView> {
    if (!SKU_PATTERN.test(sku)) throw AppError.notFound(`SKU ${sku}`);
    return this.inventory.get(sku);
  }

  @Put('admin/inventory/:sku')
  @ApiBearerAuth()
  @ApiResponse({ status: 200, type: InventoryViewDto })
  async upsert(@Param('sku') sku: string, @Body() body: UpsertSkuDto): Promise<InventoryView> {
    if (!SKU_PATTERN.test(sku)) throw AppError.validation([{ field: 'sku', message: 'sku must be 1-64 characters of [A-Za-z0-9_.:-]' }]);
    return this.inventory.upsert(sku, body);
  }
}

/**
 * The inventory as a TCC branch for other coordinators: each call is one barrier-guarded
 * transaction. Their transaction ids live in their own namespace, so an outside caller can never
 * touch the branch of one of this service's own orders.
 */
const external = (transactionId: string) => `ext:${transactionId}`;

@ApiTags('tcc participant')
@ApiBearerAuth()
@Controller('tcc/inventory')
export class ParticipantController {
  constructor(
    private readonly inventory: InventoryService,
    private readonly db: Db,
  ) {}

  @Post('try')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: TccStatusDto })
  async try(@Body() body: TccTryDto): Promise<{ status: string }> {
    const { status } = await this.db.tx((sql) => this.inventory.try(sql, external(body.transactionId), body.items));
    return { status };
  }

  @Post('confirm')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: TccStatusDto })
  async confirm(@Body() body: TccTransactionDto): Promise<{ status: string }> {
    return { status: await this.db.tx((sql) => this.inventory.confirm(sql, external(body.transactionId))) };
  }

  @Post('cancel')
  @HttpCode(200)
  @ApiResponse({ status: 200, type: TccStatusDto })
  async cancel(@Body() body: TccTransactionDto): Promise<{ status: string }> {
    return { status: await this.db.tx((sql) => this.inventory.cancel(sql, external(body.transactionId))) };
  }
}
