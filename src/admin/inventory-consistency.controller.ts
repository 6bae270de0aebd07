import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Type } from '@sinclair/typebox';
import { ActorParam, type Actor } from '../http/actor.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { Reason } from '../http/schemas.js';
import { BodyPipe } from '../http/validation.js';
import { InventoryConsistencyService, StockMismatch } from '../recovery/inventory-consistency.service.js';

const Mismatch = Type.Object({
  sku: Type.String(),
  locationId: Type.String(),
  reserved: Type.Integer(),
  held: Type.Integer({ description: 'the allocations there of holding orders and reserved outside branches' }),
  onHand: Type.Integer(),
  ledger: Type.Integer({ description: "the sum of the location's movements for the SKU" }),
});
const ConsistencyReport = Type.Object({ checked: Type.Integer({ description: 'stock rows' }), mismatches: Type.Array(Mismatch) });
const RepairReport = Type.Object({ repaired: Type.Integer(), mismatches: Type.Array(Mismatch, { description: 'as found before the repair' }) });

@ApiTags('inventory')
@Controller('admin/inventory/consistency')
export class InventoryConsistencyController {
  constructor(private readonly consistency: InventoryConsistencyService) {}

  @Get()
  @ApiOperation({ operationId: 'inventoryConsistency', summary: "Every stock row against what is held there and against its ledger; reports only" })
  @ApiJson(200, ref('InventoryConsistencyReport', ConsistencyReport))
  @ApiErrors('UNAUTHORIZED')
  check(): Promise<{ checked: number; mismatches: StockMismatch[] }> {
    return this.consistency.check();
  }

  @Post('repair')
  @HttpCode(200)
  @ApiOperation({ operationId: 'repairInventory', summary: 'Set each mismatched row\'s reserved to what is held, and record a repair movement where on hand and the ledger disagree' })
  @ApiJsonBody(Reason)
  @ApiJson(200, ref('InventoryRepairReport', RepairReport))
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED')
  repair(@Body(new BodyPipe(Reason)) body: { reason: string }, @ActorParam() actor: Actor): Promise<{ repaired: number; mismatches: StockMismatch[] }> {
    return this.consistency.repair(body.reason, actor);
  }
}
