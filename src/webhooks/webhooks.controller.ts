import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { NoBody } from '../http/schemas.js';
import { BodyPipe, QueryPipe } from '../http/validation.js';
import { DeliveriesQuery, DeliveryPage, DeliveryView, PutWebhookBody, ResendFailedResult, WebhookList, WebhookOverview, WebhookView } from './webhooks.schemas.js';
import { WebhooksService } from './webhooks.service.js';

const WEBHOOK = ref('Webhook', WebhookView);

@ApiTags('webhooks')
@Controller('admin/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Put(':name')
  @HttpCode(200)
  @ApiOperation({ operationId: 'putWebhook', summary: 'Create or replace an endpoint: URL, event types and Standard Webhooks signing secret' })
  @ApiJsonBody(PutWebhookBody)
  @ApiJson(200, WEBHOOK, 'The endpoint (its secret is never shown)')
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED')
  put(@Param('name') name: string, @Body(new BodyPipe(PutWebhookBody)) body: PutWebhookBody): Promise<WebhookView> {
    return this.webhooks.put(name, body);
  }

  @Get()
  @ApiOperation({ operationId: 'listWebhooks', summary: 'Every endpoint, by name, with its deliveries of the last hour and its last failure (secrets never shown)' })
  @ApiJson(200, ref('WebhookList', WebhookList))
  @ApiErrors('UNAUTHORIZED')
  async list(): Promise<{ data: WebhookOverview[] }> {
    return { data: await this.webhooks.list() };
  }

  @Delete(':name')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteWebhook', summary: 'Remove an endpoint and its deliveries, pending ones included' })
  @ApiJsonBody(NoBody, false)
  @ApiResponse({ status: 204, description: 'Removed' })
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND')
  async remove(@Param('name') name: string, @Body(new BodyPipe(NoBody)) _body: NoBody): Promise<void> {
    await this.webhooks.remove(name);
  }

  @Get(':name/deliveries')
  @ApiOperation({ operationId: 'listWebhookDeliveries', summary: "An endpoint's deliveries, oldest first, by status, paginated" })
  @ApiJson(200, ref('WebhookDeliveryPage', DeliveryPage))
  @ApiErrors('UNAUTHORIZED', 'VALIDATION_FAILED', 'NOT_FOUND')
  deliveries(@Param('name') name: string, @Query(new QueryPipe(DeliveriesQuery)) q: DeliveriesQuery): Promise<{ data: DeliveryView[]; nextCursor: string | null }> {
    return this.webhooks.deliveries(name, q);
  }

  @Post(':name/deliveries/retry-failed')
  @HttpCode(202)
  @ApiOperation({ operationId: 'resendFailedWebhookDeliveries', summary: 'Send every failed delivery of the endpoint again (same webhook-ids): each starts a fresh round of attempts, due now' })
  @ApiJsonBody(NoBody, false)
  @ApiJson(202, ref('ResendFailedResult', ResendFailedResult), 'Accepted: that many deliveries are pending again')
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND')
  retryFailed(@Param('name') name: string, @Body(new BodyPipe(NoBody)) _body: NoBody): Promise<{ resent: number }> {
    return this.webhooks.retryFailed(name);
  }

  @Post(':name/deliveries/:id/retry')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'retryWebhookDelivery',
    summary: 'Send a delivery again with the same webhook-id and body: one more attempt for a failed or delivered one, a pending one is due now',
  })
  @ApiJsonBody(NoBody, false)
  @ApiJson(202, ref('WebhookDelivery', DeliveryView), 'Accepted: the delivery is pending, due now')
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND')
  retry(@Param('name') name: string, @Param('id') id: string, @Body(new BodyPipe(NoBody)) _body: NoBody): Promise<DeliveryView> {
    return this.webhooks.retry(name, id);
  }
}
