import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ERROR_CODES } from '../common/errors.js';
import { registeredSchemas } from '../http/api-docs.js';
import { SESSION_COOKIE } from '../http/session-cookie.js';

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
    limit: { type: 'integer' },
  },
};

/** The OpenAPI 3 document, built from the controllers and the JSON Schemas they validate with. */
export function buildOpenApi(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('TCC inventory reservation service')
    .setDescription(
      'Try-Confirm-Cancel stock reservations for checkouts. Errors are application/problem+json (RFC 9457) with a stable `code`. ' +
        'Admin and participant routes take the operator token as `Authorization: Bearer <ADMIN_TOKEN>`.',
    )
    .setVersion('1')
    // addSecurity, not addBearerAuth: the latter stamps bearerFormat "JWT" on a token that is not one.
    .addSecurity('adminToken', { type: 'http', scheme: 'bearer', description: 'The shared operator token (ADMIN_TOKEN), an opaque string of at least 16 characters — not a JWT.' })
    .addCookieAuth(SESSION_COOKIE, { type: 'apiKey', in: 'cookie', description: 'An operator console session (POST /console/session); on /admin/* it stands in for the token, and state changes also need its X-CSRF-Token header.' }, 'consoleSession')
    .build();
  const document = SwaggerModule.createDocument(app, config, { operationIdFactory: (_controller, method) => method });
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...registeredSchemas(), Problem: PROBLEM_SCHEMA } };
  // Who may call what, in one place: /admin/* takes the token or a console session (state changes
  // with a session also need its X-CSRF-Token), /tcc/* the token only.
  for (const [path, item] of Object.entries(document.paths)) {
    const token: Record<string, string[]> = { adminToken: [] };
    const security = path.startsWith('/admin/') ? [token, { consoleSession: [] }] : path.startsWith('/tcc/') ? [token] : undefined;
    if (!security) continue;
    for (const op of [item.get, item.put, item.post, item.delete, item.patch]) if (op) op.security = security;
  }
  return document;
}

/** /docs (UI) and /docs-json. */
export function setupSwagger(app: INestApplication): OpenAPIObject {
  const document = buildOpenApi(app);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
  return document;
}
