import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AdminModule } from '../../admin/admin.module';
import { OrderModule } from '../../order/order.module';
import { ReconciliationModule } from '../../reconciliation/reconciliation.module';
import { TradeModule } from '../../trade/trade.module';

/** Swagger UI at /docs, the document at /docs-json (and /docs-yaml). */
export const OPENAPI_UI_PATH = 'docs';

/**
 * The order and admin APIs: the ones people call. The platforms' callback endpoints follow the
 * platforms' own specifications, and health and metrics are for machines (see docs/api.md).
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
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
    include: [OrderModule, TradeModule, AdminModule, ReconciliationModule],
  });
}

export function serveOpenApi(app: INestApplication): void {
  SwaggerModule.setup(OPENAPI_UI_PATH, app, buildOpenApiDocument(app));
}
