import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppError } from '../common/errors.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { duplicateSku, SKU_PATTERN } from '../http/schemas.js';
import { BodyPipe } from '../http/validation.js';
import { InventoryService } from './inventory.service.js';
import type { InventoryView } from './inventory.types.js';
import { ParticipantService } from './participant.service.js';
import { InventoryView as InventorySchema, TccPhaseBody, TccStatus, TccTryBody, UpsertSkuBody } from './inventory.schemas.js';

const INVENTORY = ref('Inventory', InventorySchema);
const STATUS = ref('TccStatus', TccStatus);

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

/**
 * The inventory as a TCC branch for other coordinators (see participant.service.ts). Every definite
 * refusal is 409 here, so a DTM coordinator rolls back instead of retrying; Confirm and Cancel
 * accept (and ignore) the Try's fields, since DTM sends one body to every phase.
 */
@ApiTags('tcc participant')
@Controller('tcc/inventory')
export class ParticipantController {
  constructor(private readonly participant: ParticipantService) {}

  @Post('try')
  @HttpCode(200)
  @ApiOperation({ operationId: 'participantTry', summary: 'Try: reserve for an outside transaction, until timeoutMs (default PARTICIPANT_TTL_MS)' })
  @ApiJsonBody(TccTryBody)
  @ApiJson(200, STATUS)
  @ApiErrors('UNAUTHORIZED', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'TRANSACTION_CANCELED', 'INSUFFICIENT_STOCK')
  async try(@Body(new BodyPipe(TccTryBody)) body: TccTryBody): Promise<{ status: string }> {
    const dup = duplicateSku(body.items);
    if (dup) throw AppError.validation([{ field: 'items', message: `each SKU may appear at most once; ${dup} repeats` }]);
    return { status: await this.participant.try(body.transactionId, body.items, body.timeoutMs) };
  }

  @Post('confirm')
  @HttpCode(200)
  @ApiOperation({ operationId: 'participantConfirm', summary: 'Confirm: the reservation becomes a sale' })
  @ApiJsonBody(TccPhaseBody)
  @ApiJson(200, STATUS)
  @ApiErrors('UNAUTHORIZED', 'VALIDATION_FAILED', 'NO_RESERVATION', 'TRANSACTION_CANCELED')
  async confirm(@Body(new BodyPipe(TccPhaseBody)) body: TccPhaseBody): Promise<{ status: string }> {
    return { status: await this.participant.confirm(body.transactionId) };
  }

  @Post('cancel')
  @HttpCode(200)
  @ApiOperation({ operationId: 'participantCancel', summary: 'Cancel: release the reservation (an empty rollback before any Try)' })
  @ApiJsonBody(TccPhaseBody)
  @ApiJson(200, STATUS)
  @ApiErrors('UNAUTHORIZED', 'VALIDATION_FAILED', 'TRANSACTION_CONFIRMED')
  async cancel(@Body(new BodyPipe(TccPhaseBody)) body: TccPhaseBody): Promise<{ status: string }> {
    return { status: await this.participant.cancel(body.transactionId) };
  }
}
