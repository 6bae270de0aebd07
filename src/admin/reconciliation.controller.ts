import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { BodyPipe, QueryPipe } from '../http/validation.js';
import { ReconciliationReport, ReconciliationService } from '../recovery/reconciliation.service.js';
import { ReconciliationBody, ReconciliationQuery, ReconciliationReport as ReportSchema } from './admin.schemas.js';

const REPORT = ref('ReconciliationReport', ReportSchema);

@ApiTags('admin')
@Controller('admin/reconciliation')
export class ReconciliationController {
  constructor(private readonly reconciliation: ReconciliationService) {}

  @Get()
  @ApiOperation({ operationId: 'reconciliationReport', summary: 'Compare orders sent to the gateway with its record; reports only' })
  @ApiJson(200, REPORT)
  @ApiErrors('UNAUTHORIZED', 'VALIDATION_FAILED')
  report(@Query(new QueryPipe(ReconciliationQuery)) q: { sinceMinutes?: string }): Promise<ReconciliationReport> {
    return this.reconciliation.run((q.sinceMinutes ? Number(q.sinceMinutes) : 1440) * 60_000, false);
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'reconcile', summary: 'The same pass, refunding what is owed and flagging mismatches (idempotent)' })
  @ApiJsonBody(ReconciliationBody, false)
  @ApiJson(200, REPORT)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'MALFORMED_JSON', 'VALIDATION_FAILED')
  act(@Body(new BodyPipe(ReconciliationBody)) body: { sinceMinutes?: number }): Promise<ReconciliationReport> {
    return this.reconciliation.run((body.sinceMinutes ?? 1440) * 60_000, true);
  }
}
