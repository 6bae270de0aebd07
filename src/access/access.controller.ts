import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { actorOf, ActorParam, type Actor } from '../http/actor.js';
import { ApiErrors, ApiJson, ApiJsonBody, ref } from '../http/api-docs.js';
import { clientAddress } from '../http/client-address.js';
import { NoBody } from '../http/schemas.js';
import { BodyPipe, QueryPipe } from '../http/validation.js';
import {
  ApiKeyPage,
  ApiKeyView as ApiKeySchema,
  AuditPage,
  AuditQuery,
  CreateApiKeyBody,
  CreateOperatorBody,
  NewApiKeyView,
  OperatorPage,
  OperatorView as OperatorSchema,
  PageQuery,
  PatchOperatorBody,
} from './access.schemas.js';
import { ApiKeys, ApiKeyView } from './api-keys.js';
import { AuditLog, AuditView } from './audit.js';
import { Operators, OperatorView } from './operators.js';
import type { Scope } from './scopes.js';

const API_KEY = ref('ApiKey', ApiKeySchema);
const OPERATOR = ref('Operator', OperatorSchema);
const WRITE_ERRORS = ['UNAUTHORIZED', 'FORBIDDEN', 'PAYLOAD_TOO_LARGE', 'MALFORMED_JSON', 'VALIDATION_FAILED'] as const;

/** Records an identity action in the audit log (awaited: it is the action's own record). */
function audited(audit: AuditLog, req: FastifyRequest, action: string, target: string, outcome: number, detail: Record<string, unknown> = {}): Promise<void> {
  return audit.record({ principal: actorOf(req).principal, action, target, outcome, requestId: req.id, address: clientAddress(req.raw), detail });
}

@ApiTags('access')
@Controller('admin/api-keys')
export class ApiKeysController {
  constructor(
    private readonly keys: ApiKeys,
    private readonly audit: AuditLog,
  ) {}

  @Post()
  @ApiOperation({ operationId: 'createApiKey', summary: 'Make an API key with scopes; the key itself is in this answer only' })
  @ApiJsonBody(CreateApiKeyBody)
  @ApiJson(201, ref('NewApiKey', NewApiKeyView))
  @ApiErrors(...WRITE_ERRORS)
  async create(@Body(new BodyPipe(CreateApiKeyBody)) body: CreateApiKeyBody, @ActorParam() actor: Actor, @Req() req: FastifyRequest): Promise<ApiKeyView & { key: string }> {
    const made = await this.keys.create({ name: body.name, scopes: body.scopes as Scope[], expiresAt: body.expiresAt }, actor.principal);
    await audited(this.audit, req, 'api_key.created', made.id, 201, { name: made.name, scopes: made.scopes, prefix: made.prefix });
    return made;
  }

  @Get()
  @ApiOperation({ operationId: 'listApiKeys', summary: 'API keys (never the keys themselves), oldest first, paginated' })
  @ApiJson(200, ref('ApiKeyPage', ApiKeyPage))
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'VALIDATION_FAILED')
  list(@Query(new QueryPipe(PageQuery)) q: PageQuery): Promise<{ data: ApiKeyView[]; nextCursor: string | null }> {
    return this.keys.list(q);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getApiKey', summary: 'An API key (never the key itself)' })
  @ApiJson(200, API_KEY)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND')
  get(@Param('id') id: string): Promise<ApiKeyView> {
    return this.keys.get(id);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({ operationId: 'revokeApiKey', summary: 'Revoke an API key: refused by every process within 5 s (again: the same answer)' })
  @ApiJsonBody(NoBody, false)
  @ApiJson(200, API_KEY)
  @ApiErrors(...WRITE_ERRORS, 'NOT_FOUND')
  async revoke(@Param('id') id: string, @Body(new BodyPipe(NoBody)) _body: NoBody, @Req() req: FastifyRequest): Promise<ApiKeyView> {
    const key = await this.keys.revoke(id);
    await audited(this.audit, req, 'api_key.revoked', key.id, 200, { name: key.name, prefix: key.prefix });
    return key;
  }
}

@ApiTags('access')
@Controller('admin/operators')
export class OperatorsController {
  constructor(
    private readonly operators: Operators,
    private readonly audit: AuditLog,
  ) {}

  @Post()
  @ApiOperation({ operationId: 'createOperator', summary: 'Add an operator (a person) with a role and a password' })
  @ApiJsonBody(CreateOperatorBody)
  @ApiJson(201, OPERATOR)
  @ApiErrors(...WRITE_ERRORS, 'OPERATOR_EXISTS')
  async create(@Body(new BodyPipe(CreateOperatorBody)) body: CreateOperatorBody, @Req() req: FastifyRequest): Promise<OperatorView> {
    const made = await this.operators.create(body as CreateOperatorBody & { role: OperatorView['role'] });
    await audited(this.audit, req, 'operator.created', made.id, 201, { email: made.email, role: made.role });
    return made;
  }

  @Get()
  @ApiOperation({ operationId: 'listOperators', summary: 'Operators, oldest first, paginated' })
  @ApiJson(200, ref('OperatorPage', OperatorPage))
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'VALIDATION_FAILED')
  list(@Query(new QueryPipe(PageQuery)) q: PageQuery): Promise<{ data: OperatorView[]; nextCursor: string | null }> {
    return this.operators.list(q);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getOperator', summary: 'An operator' })
  @ApiJson(200, OPERATOR)
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND')
  get(@Param('id') id: string): Promise<OperatorView> {
    return this.operators.get(id);
  }

  @Patch(':id')
  @ApiOperation({ operationId: 'changeOperator', summary: "Change an operator's name, role or password, or disable them (ends their console sessions on every process)" })
  @ApiJsonBody(PatchOperatorBody)
  @ApiJson(200, OPERATOR)
  @ApiErrors(...WRITE_ERRORS, 'NOT_FOUND')
  async patch(@Param('id') id: string, @Body(new BodyPipe(PatchOperatorBody)) body: PatchOperatorBody, @Req() req: FastifyRequest): Promise<OperatorView> {
    const changed = await this.operators.patch(id, body as PatchOperatorBody & { role?: OperatorView['role'] });
    // What changed, by name: never the password itself.
    const fields = Object.keys(body).filter((k) => k !== 'password');
    await audited(this.audit, req, 'operator.changed', changed.id, 200, { ...(body.password !== undefined ? { password: 'changed' } : {}), changed: fields, role: changed.role, disabled: changed.disabledAt !== null });
    return changed;
  }
}

@ApiTags('access')
@Controller('admin/audit')
export class AuditController {
  constructor(private readonly audit: AuditLog) {}

  @Get()
  @ApiOperation({ operationId: 'listAudit', summary: 'Who did what: sign-ins, keys, operators and every state-changing admin call, newest first' })
  @ApiJson(200, ref('AuditPage', AuditPage))
  @ApiErrors('UNAUTHORIZED', 'FORBIDDEN', 'VALIDATION_FAILED')
  list(@Query(new QueryPipe(AuditQuery)) q: AuditQuery): Promise<{ data: AuditView[]; nextCursor: string | null }> {
    return this.audit.list(q);
  }
}
