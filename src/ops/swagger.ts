import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { ERROR_CODES } from '../common/errors.js';

const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 9457 problem details; `code` is the stable identifier clients switch on',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', enum: [...ERROR_CODES] },
    errors: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } } },
    sku: { type: 'string' },
    requested: { type: 'integer' },
    available: { type: 'integer' },
  },
};

/** OpenAPI 3 at /docs (UI) and /docs-json, built from the controllers and DTOs, with the error schema. */
export function setupSwagger(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('TCC inventory reservation service')
    .setDescription('Try-Confirm-Cancel stock reservations for checkouts. Errors are application/problem+json (RFC 9457) with a stable `code`.')
    .setVersion('1')
    .addBearerAuth()
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components = { ...document.components, schemas: { ...document.components?.schemas, Problem: PROBLEM_SCHEMA } };
  const problem = { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
  for (const item of Object.values(document.paths)) {
    for (const op of [item.get, item.put, item.post, item.delete, item.patch]) {
      if (!op) continue;
      op.responses['4XX'] = { description: 'client error (problem+json)', ...problem };
      op.responses['5XX'] = { description: 'server error, SERVICE_UNAVAILABLE when a dependency is down (problem+json)', ...problem };
    }
  }
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
}
