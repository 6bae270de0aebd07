import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiErrors, ApiJson, ref } from '../http/api-docs.js';
import { HealthAnswer, HealthService } from './health.service.js';
import { HealthBody } from './health.schemas.js';

const HEALTH = ref('Health', HealthBody);

function send(res: FastifyReply, a: HealthAnswer): void {
  res.code(a.status).type(a.contentType).send(JSON.stringify(a.body));
}

@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ApiOperation({ operationId: 'health', summary: '200 when Postgres and Redis answer, else 503 naming the one that is down' })
  @ApiJson(200, HEALTH)
  @ApiErrors()
  async all(@Res() res: FastifyReply): Promise<void> {
    send(res, await this.health.health());
  }

  @Get('live')
  @ApiOperation({ operationId: 'healthLive', summary: '200 while the process runs' })
  @ApiJson(200, HEALTH)
  @ApiErrors()
  live(@Res() res: FastifyReply): void {
    send(res, this.health.live());
  }

  @Get('ready')
  @ApiOperation({ operationId: 'healthReady', summary: '200 when Postgres answers (Redis away shows as degraded), else 503' })
  @ApiJson(200, HEALTH)
  @ApiErrors()
  async ready(@Res() res: FastifyReply): Promise<void> {
    send(res, await this.health.ready());
  }
}
