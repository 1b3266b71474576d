import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { EventsModule } from '../events.module';
import { webhooksConfig } from './webhooks.config';
import { WebhookAttemptRepository } from './webhook-attempt.repository';
import { WebhookDeliveries } from './webhook-deliveries.repository';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookEndpointRepository } from './webhook-endpoint.repository';
import { WebhookEndpoints } from './webhook-endpoints.service';
import { WebhookFanOut } from './webhook-fan-out';
import { WEBHOOK_GAUGES } from './webhook-gauges';

/**
 * Signed webhooks (Standard Webhooks) of the after-payment events: endpoints, fan-out from the
 * outbox, delivery with retries, attempts, resend and recover. Independent of the publisher: it
 * works with RabbitMQ, and without any broker. Its admin routes are the admin module's
 * (WebhookEndpointsController), as the dead letters' are.
 */
@Module({
  imports: [ConfigModule.forFeature(webhooksConfig), EventsModule],
  providers: [
    WebhookDeliveries,
    WebhookEndpointRepository,
    WebhookAttemptRepository,
    WebhookEndpoints,
    WebhookFanOut,
    WebhookDispatcher,
    ...WEBHOOK_GAUGES,
  ],
  exports: [WebhookEndpoints],
})
export class WebhooksModule {}
