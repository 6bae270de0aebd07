import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiJson, ref } from '../http/api-docs.js';
import { QueryPipe } from '../http/validation.js';
import { BranchList, BranchQuery } from '../inventory/participant/participant.schemas.js';
import { BranchView, ParticipantService } from '../inventory/participant/participant.service.js';

/** Outside coordinators' branches, for operators: which are reserved, since when, until when. */
@ApiTags('admin')
@Controller('admin/participant/transactions')
export class ParticipantAdminController {
  constructor(private readonly participant: ParticipantService) {}

  @Get()
  @ApiOperation({ operationId: 'listParticipantTransactions', summary: "Outside coordinators' TCC branches, oldest first" })
  @ApiJson(200, ref('BranchList', BranchList))
  @ApiErrors('UNAUTHORIZED', 'VALIDATION_FAILED')
  list(@Query(new QueryPipe(BranchQuery)) q: BranchQuery): Promise<{ data: BranchView[]; nextCursor: string | null }> {
    return this.participant.list({
      status: q.status as BranchView['status'] | undefined,
      olderThanMinutes: q.olderThanMinutes === undefined ? undefined : Number(q.olderThanMinutes),
      limit: q.limit ? Number(q.limit) : 100,
      cursor: q.cursor,
    });
  }
}
