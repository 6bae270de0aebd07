import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppError } from '../common/errors.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { ActorParam, type Actor } from '../http/actor.js';
import { LOCATION_ID_PATTERN, SKU_PATTERN } from '../http/schemas.js';
import { BodyPipe } from '../http/validation.js';
import { InventoryView as InventorySchema, SetStockBody, UpsertSkuBody } from './inventory.schemas.js';
import { InventoryService } from './inventory.service.js';
import type { InventoryView } from './inventory.types.js';

const INVENTORY = ref('Inventory', InventorySchema);

@ApiTags('inventory')
@Controller()
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Get('inventory/:sku')
  @ApiOperation({ operationId: 'getInventory', summary: 'Stock of a SKU: on hand, reserved, safety stock and available, in all and per location' })
  @ApiJson(200, INVENTORY)
  @ApiErrors('NOT_FOUND')
  async get(@Param('sku') sku: string): Promise<InventoryView> {
    if (!SKU_PATTERN.test(sku)) throw AppError.notFound(`SKU ${sku}`);
    return this.inventory.get(sku);
  }

  @Put('admin/inventory/:sku')
  @ApiOperation({ operationId: 'upsertInventory', summary: 'Create or update a SKU (price, currency, low-stock threshold, the on-hand stock of location default)' })
  @ApiJsonBody(UpsertSkuBody)
  @ApiJson(200, INVENTORY)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'STOCK_BELOW_RESERVED')
  async upsert(@Param('sku') sku: string, @Body(new BodyPipe(UpsertSkuBody)) body: UpsertSkuBody, @ActorParam() actor: Actor): Promise<InventoryView> {
    if (!SKU_PATTERN.test(sku)) throw AppError.validation([{ field: 'sku', message: 'sku must be 1-64 characters of [A-Za-z0-9_.:-]' }]);
    return this.inventory.upsert(sku, body, actor);
  }

  @Put('admin/inventory/:sku/locations/:locationId')
  @ApiOperation({ operationId: 'setLocationStock', summary: 'Set the stock of a SKU at a location (compare-and-set with expectedOnHand)' })
  @ApiJsonBody(SetStockBody)
  @ApiJson(200, INVENTORY)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND', 'STOCK_BELOW_RESERVED', 'STOCK_CHANGED')
  async setStock(
    @Param('sku') sku: string,
    @Param('locationId') locationId: string,
    @Body(new BodyPipe(SetStockBody)) body: SetStockBody,
    @ActorParam() actor: Actor,
  ): Promise<InventoryView> {
    if (!SKU_PATTERN.test(sku)) throw AppError.notFound(`SKU ${sku}`);
    if (!LOCATION_ID_PATTERN.test(locationId)) throw AppError.notFound(`location ${locationId}`);
    return this.inventory.setStock(sku, locationId, body, actor);
  }
}
