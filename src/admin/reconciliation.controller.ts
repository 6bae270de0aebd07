import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AppError } from '../common/errors.js';
import { ReconciliationReport, ReconciliationService } from '../recovery/reconciliation.service.js';
import { ReconciliationQuery } from './admin.dto.js';

@ApiTags('admin')
@ApiBearerAuth()
@Controller('admin/reconciliation')
export class ReconciliationController {
  constructor(private readonly reconciliation: ReconciliationService) {}

  /** Runs a reconciliation pass now and answers its report (refunds it issues are idempotent). */
  @Get()
  async run(@Query() q: ReconciliationQuery): Promise<ReconciliationReport> {
    const minutes = q.sinceMinutes ? Number(q.sinceMinutes) : 1440;
    if (minutes > 43_200) throw AppError.validation([{ field: 'sinceMinutes', message: 'sinceMinutes must be an integer from 1 to 43200' }]);
    return this.reconciliation.run(minutes * 60_000);
  }
}
