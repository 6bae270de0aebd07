import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Static, Type } from '@sinclair/typebox';
import { ApiErrors, ApiJson, ref } from '../http/api-docs.js';
import { intText } from '../http/schemas.js';
import { QueryPipe } from '../http/validation.js';
import { BranchList } from '../inventory/participant/participant.schemas.js';
import { BranchView, ParticipantService } from '../inventory/participant/participant.service.js';

const BranchQuery = Type.Object(
  {
    status: Type.Optional(Type.String({ enum: ['RESERVED', 'CONFIRMED', 'CANCELED'], 'x-message': 'status must be RESERVED, CONFIRMED or CANCELED' })),
    olderThanMinutes: Type.Optional(intText(/^(?:0|[1-9]\d{0,6})$/, 'olderThanMinutes must be an integer from 0 to 9999999')),
    limit: Type.Optional(intText(/^(?:[1-9]\d{0,2}|1000)$/, 'limit must be an integer from 1 to 1000')),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 700, description: 'nextCursor of the previous page' })),
  },
  { additionalProperties: false },
);
type BranchQuery = Static<typeof BranchQuery>;

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
