import type { INestApplication } from '@nestjs/common';
import { tableScope } from '../access/scopes.js';
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
    errors: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' }, line: { type: 'integer', description: 'a CSV import: the row\'s line in the file (the header is line 1)' } } } },
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
        'Admin and participant routes take a bearer credential — the root token (ADMIN_TOKEN, every right) or an API key (`tcc_…`, its scopes) — ' +
        'and /admin/* also a console session. Each such operation names the scope it needs in `x-required-scope` (`admin` holds every scope); ' +
        'a valid credential without it is refused 403 FORBIDDEN with `requiredScope`. The checkout routes need the scope `checkout` only when CHECKOUT_AUTH=required.',
    )
    .setVersion('1')
    // addSecurity, not addBearerAuth: the latter stamps bearerFormat "JWT" on a token that is not one.
    .addSecurity('adminToken', {
      type: 'http',
      scheme: 'bearer',
      description:
        'The root token (ADMIN_TOKEN, an opaque string of at least 16 characters: every scope) or an API key (`tcc_` and 43 URL-safe characters, made with POST /admin/api-keys: the scopes it was given). Neither is a JWT.',
    })
    .addCookieAuth(
      SESSION_COOKIE,
      { type: 'apiKey', in: 'cookie', description: "An operator console session (POST /console/session): the root token's (every scope) or an operator's (their role's scopes); on /admin/* only, and state changes also need its X-CSRF-Token header." },
      'consoleSession',
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, { operationIdFactory: (_controller, method) => method });
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...registeredSchemas(), Problem: PROBLEM_SCHEMA } };
  // Who may call what, in one place: /admin/* takes a bearer credential or a console session (state
  // changes with a session also need its X-CSRF-Token), /tcc/* a bearer credential only; each
  // operation names its scope (access/scopes.ts's table, the one the service enforces).
  for (const [path, item] of Object.entries(document.paths)) {
    const token: Record<string, string[]> = { adminToken: [] };
    const security = path.startsWith('/admin/') ? [token, { consoleSession: [] }] : path.startsWith('/tcc/') ? [token] : undefined;
    if (!security) continue;
    const route = path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
    for (const [method, op] of [['GET', item.get], ['PUT', item.put], ['POST', item.post], ['DELETE', item.delete], ['PATCH', item.patch]] as const) {
      if (!op) continue;
      op.security = security;
      (op as unknown as Record<string, unknown>)['x-required-scope'] = tableScope(method, route) ?? 'admin';
    }
  }
  return document;
}

/**
 * /docs (UI) and /docs-json. The document is built on the first request for it, not at start-up:
 * scanning every controller cost about a twentieth of a start's CPU, in every process, api or not
 * asked. The OpenAPI spec (test/openapi.e2e-spec.ts) reads /docs-json and holds it equal to the
 * committed openapi.json, so a document that cannot be built still fails the suite.
 */
export function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApi(app), { jsonDocumentUrl: 'docs-json' });
}
