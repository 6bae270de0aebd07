import { Controller, Get, Injectable, Param } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Type } from '@sinclair/typebox';
import { AppError } from '../common/errors.js';
import { Db } from '../database/db.js';
import { ApiErrors, ApiJson, ref } from '../http/api-docs.js';
import { LOCATION_ID_PATTERN } from '../http/schemas.js';
import { HOLDING } from '../orders/state/order-state.js';
import { LOCATION_USAGE_SQL } from './location-usage.sql.js';

export const LocationUsage = Type.Object({
  locationId: Type.String(),
  holdingOrders: Type.Integer({ description: 'orders holding stock there now (TRY_SUCCESS, CONFIRM_PENDING)' }),
  reservedBranches: Type.Integer({ description: 'outside TCC branches reserved there now' }),
  skusWithStock: Type.Integer({ description: 'SKUs with on hand above 0 there' }),
  reservedUnits: Type.Integer({ description: 'units reserved there, by orders and branches' }),
});
type LocationUsage = { locationId: string; holdingOrders: number; reservedBranches: number; skusWithStock: number; reservedUnits: number };

@Injectable()
export class LocationUsageReader {
  constructor(private readonly db: Db) {}

  async read(id: string): Promise<LocationUsage> {
    const row = LOCATION_ID_PATTERN.test(id) ? await this.db.sql.one<LocationUsage>(LOCATION_USAGE_SQL, [id, HOLDING, 'RESERVED']) : undefined;
    if (!row) throw AppError.notFound(`location ${id}`);
    return row;
  }
}

/** Before a location is made inactive, the console says what that affects. */
@ApiTags('inventory')
@Controller('admin/locations')
export class LocationUsageController {
  constructor(private readonly usage: LocationUsageReader) {}

  @Get(':id/usage')
  @ApiOperation({ operationId: 'locationUsage', summary: 'What a location holds now: holding orders and reserved branches with stock there, SKUs with stock there' })
  @ApiJson(200, ref('LocationUsage', LocationUsage))
  @ApiErrors('UNAUTHORIZED', 'NOT_FOUND')
  read(@Param('id') id: string): Promise<LocationUsage> {
    return this.usage.read(id);
  }
}
