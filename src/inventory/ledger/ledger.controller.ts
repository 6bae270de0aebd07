import { Body, Controller, Get, Headers, Param, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppError } from '../../common/errors.js';
import { ActorParam, type Actor } from '../../http/actor.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../../http/api-docs.js';
import { IDEMPOTENCY_KEY_PATTERN, SKU_PATTERN } from '../../http/schemas.js';
import { BodyPipe, QueryPipe } from '../../http/validation.js';
import type { InventoryView } from '../inventory.types.js';
import { AdjustmentBody, AdjustmentResult, MovementPage, MovementsQuery, type MovementView } from './ledger.schemas.js';
import { LedgerService } from './ledger.service.js';

@ApiTags('inventory')
@Controller('admin/inventory/:sku')
export class LedgerController {
  constructor(private readonly ledger: LedgerService) {}

  @Get('movements')
  @ApiOperation({ operationId: 'listMovements', summary: "A SKU's ledger movements, newest first, by location and kind, paginated" })
  @ApiJson(200, ref('MovementPage', MovementPage))
  @ApiErrors('UNAUTHORIZED', 'VALIDATION_FAILED', 'NOT_FOUND')
  movements(@Param('sku') sku: string, @Query(new QueryPipe(MovementsQuery)) q: MovementsQuery): Promise<{ data: MovementView[]; nextCursor: string | null }> {
    if (!SKU_PATTERN.test(sku)) throw AppError.notFound(`SKU ${sku}`);
    return this.ledger.movements(sku, q);
  }

  @Post('adjustments')
  @ApiOperation({ operationId: 'adjustStock', summary: 'Add a delta to the on-hand stock of a SKU at a location, with a reason (atomic; optional Idempotency-Key)' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1-255 characters of [A-Za-z0-9_.:-]; the same key and body again answer the first movement and change nothing more' })
  @ApiJsonBody(AdjustmentBody)
  @ApiJson(201, ref('AdjustmentResult', AdjustmentResult), 'Adjusted (or the first answer of this Idempotency-Key replayed)')
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND', 'IDEMPOTENCY_KEY_REUSED', 'STOCK_BELOW_RESERVED')
  adjust(
    @Param('sku') sku: string,
    @Body(new BodyPipe(AdjustmentBody)) body: AdjustmentBody,
    @Headers('idempotency-key') key: string | undefined,
    @ActorParam() actor: Actor,
  ): Promise<{ movement: MovementView; inventory: InventoryView }> {
    if (key !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw AppError.validation([{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1-255 characters of [A-Za-z0-9_.:-]' }]);
    }
    if (!SKU_PATTERN.test(sku)) throw AppError.notFound(`SKU ${sku}`);
    return this.ledger.adjust(sku, body, key, actor);
  }
}
