import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppError } from '../common/errors.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { SKU_PATTERN } from '../http/schemas.js';
import { BodyPipe } from '../http/validation.js';
import { InventoryView as InventorySchema, UpsertSkuBody } from './inventory.schemas.js';
import { InventoryService } from './inventory.service.js';
import type { InventoryView } from './inventory.types.js';

const INVENTORY = ref('Inventory', InventorySchema);

@ApiTags('inventory')
@Controller()
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Get('inventory/:sku')
  @ApiOperation({ operationId: 'getInventory', summary: 'Stock of a SKU: on hand, reserved, available' })
  @ApiJson(200, INVENTORY)
  @ApiErrors('NOT_FOUND')
  async get(@Param('sku') sku: string): Promise<InventoryView> {
    if (!SKU_PATTERN.test(sku)) throw AppError.notFound(`SKU ${sku}`);
    return this.inventory.get(sku);
  }

  @Put('admin/inventory/:sku')
  @ApiOperation({ operationId: 'upsertInventory', summary: 'Create or update a SKU (price, currency, on-hand stock)' })
  @ApiJsonBody(UpsertSkuBody)
  @ApiJson(200, INVENTORY)
  @ApiErrors('UNAUTHORIZED', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'STOCK_BELOW_RESERVED')
  async upsert(@Param('sku') sku: string, @Body(new BodyPipe(UpsertSkuBody)) body: UpsertSkuBody): Promise<InventoryView> {
    if (!SKU_PATTERN.test(sku)) throw AppError.validation([{ field: 'sku', message: 'sku must be 1-64 characters of [A-Za-z0-9_.:-]' }]);
    return this.inventory.upsert(sku, body);
  }
}
