import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../../http/api-docs.js';
import { BodyPipe } from '../../http/validation.js';
import { TccPhaseBody, TccStatus, TccTryBody } from './participant.schemas.js';
import { ParticipantService } from './participant.service.js';

const STATUS = ref('TccStatus', TccStatus);

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
  async reserve(@Body(new BodyPipe(TccTryBody)) body: TccTryBody): Promise<{ status: string }> {
    return { status: await this.participant.reserve(body.transactionId, body.items, body.timeoutMs, body.locationIds) };
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
