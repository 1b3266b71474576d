import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AdminModule } from '../../admin/admin.module';
import { webhooksConfig } from '../../platform/config/webhooks.config';
import { WebhookDeliveries } from './webhook-deliveries.repository';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookEndpoints } from './webhook-endpoints.service';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { WebhookFanOut } from './webhook-fan-out';
import { WEBHOOK_GAUGES } from './webhook-gauges';

/**
 * Signed webhooks (Standard Webhooks) of the after-payment events: endpoints, fan-out from the
 * outbox, delivery with retries, attempts, resend and recover. Independent of the publisher: it
 * works with RabbitMQ, and without any broker.
 */
@Module({
  imports: [ConfigModule.forFeature(webhooksConfig), AdminModule],
  controllers: [WebhookEndpointsController],
  providers: [WebhookDeliveries, WebhookEndpoints, WebhookFanOut, WebhookDispatcher, ...WEBHOOK_GAUGES],
})
export class WebhooksModule {}
