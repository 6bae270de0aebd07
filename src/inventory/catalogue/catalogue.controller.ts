import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ActorParam, type Actor } from '../../http/actor.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../../http/api-docs.js';
import { QueryPipe } from '../../http/validation.js';
import type { InventoryView } from '../inventory.types.js';
import { CataloguePage, CatalogueQuery, ImportBody, ImportQuery, ImportResult } from './catalogue.schemas.js';
import { CatalogueService } from './catalogue.service.js';

@ApiTags('inventory')
@Controller('admin/inventory')
export class CatalogueController {
  constructor(private readonly catalogue: CatalogueService) {}

  @Get()
  @ApiOperation({ operationId: 'listInventory', summary: 'Every SKU as its inventory JSON, by sku; filters: low stock, a location, a SKU prefix' })
  @ApiJson(200, ref('CataloguePage', CataloguePage))
  @ApiErrors('UNAUTHORIZED', 'VALIDATION_FAILED')
  list(@Query(new QueryPipe(CatalogueQuery)) q: CatalogueQuery): Promise<{ data: (InventoryView & { lowAt: string[] })[]; nextCursor: string | null }> {
    return this.catalogue.list(q);
  }

  @Post('import')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'importInventory',
    summary: 'Create and update SKUs and their stock in bulk (JSON or text/csv, up to 10,000 rows, bodies up to 1 MiB), all or nothing; ?dryRun=true answers the same counts and changes nothing',
  })
  @ApiConsumes('application/json', 'text/csv')
  @ApiJsonBody(ImportBody)
  @ApiJson(200, ref('ImportResult', ImportResult))
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'STOCK_BELOW_RESERVED')
  import(@Body() raw: unknown, @Query(new QueryPipe(ImportQuery)) q: ImportQuery, @ActorParam() actor: Actor): Promise<ImportResult> {
    return this.catalogue.import(raw, actor, q.dryRun === 'true');
  }
}
