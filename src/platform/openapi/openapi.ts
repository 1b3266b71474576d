import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerDocumentOptions, SwaggerModule } from '@nestjs/swagger';

type DocumentedModules = NonNullable<SwaggerDocumentOptions['include']>;

/** Swagger UI at /docs, the document at /docs-json (and /docs-yaml). */
export const OPENAPI_UI_PATH = 'docs';

/**
 * The routes of `documented` modules: the order and admin APIs, the ones people call (see
 * DOCUMENTED_MODULES). The platforms' callback endpoints follow the platforms' own specifications,
 * and health and metrics are for machines (see docs/api.md).
 */
export function buildOpenApiDocument(app: INestApplication, documented: DocumentedModules): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('payment-callback-service')
    .setDescription(
      "Order registration for the payment-callback service, and the operators' admin API. " +
        'Amounts are integer minor units (fen, cents) everywhere: 1999 is 19.99.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'INTERNAL_API_TOKEN' }, 'internal')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'an operator token of ADMIN_TOKENS' }, 'admin')
    .build();
  return SwaggerModule.createDocument(app, config, {
    include: documented,
  });
}

export function serveOpenApi(app: INestApplication, documented: DocumentedModules): void {
  SwaggerModule.setup(OPENAPI_UI_PATH, app, buildOpenApiDocument(app, documented));
}
