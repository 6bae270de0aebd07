import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** OpenAPI 3 at /docs (UI) and /docs-json, built from the controllers and DTOs. */
export function setupSwagger(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('TCC inventory reservation service')
    .setDescription('Try-Confirm-Cancel stock reservations for checkouts. Errors are application/problem+json (RFC 9457) with a stable `code`.')
    .setVersion('1')
    .addBearerAuth()
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
}
