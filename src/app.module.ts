import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AdminModule } from './admin/admin.module';
import { serverConfig } from './platform/config/server.config';
import { DatabaseModule } from './platform/database/database.module';
import { HealthModule } from './platform/health/health.module';
import { EventsHealthIndicator } from './events/events.health';
import { DeliverySpool } from './intake/spool/delivery-spool';
import { SpoolHealthIndicator } from './intake/spool/spool.health';
import { SpoolModule } from './intake/spool/spool.module';
import { LifecycleModule } from './platform/lifecycle/lifecycle.module';
import { LoggingModule } from './platform/logging/logging.module';
import { MetricsModule } from './platform/metrics/metrics.module';
import { NotifyModule } from './intake/notify.module';
import { OrderModule } from './order/order.module';
import { TradeModule } from './trade/trade.module';
import { TransactionModule } from './platform/transaction/transaction.module';
import { EventsModule } from './events/events.module';
import { WebhooksModule } from './events/webhooks/webhooks.module';
import { RabbitmqModule } from './events/rabbitmq/rabbitmq.module';
import { RetentionModule } from './platform/retention/retention.module';
import { DeliveryBytesRetention } from './payments/idempotency/delivery-bytes.retention';
import { IdempotencyModule } from './payments/idempotency/idempotency.module';
import { PublishedEventsRetention } from './events/published-events.retention';
import { ProcessedEventsRetention } from './events/subscribers/processed-events.retention';
import { SubscribersModule } from './events/subscribers/subscribers.module';
import { RefusedNotificationModule } from './payments/refused-notification/refused-notification.module';
import {
  RefusedHoursRetention,
  RefusedNotificationsRetention,
} from './payments/refused-notification/refused-notifications.retention';
import { RefundModule } from './refund/refund.module';
import { ReconciliationModule } from './reconciliation/reconciliation.module';
import { AdminAudit } from './operators/audit/admin-audit.entity';
import { MerchantChange } from './payments/merchants/merchant-change.entity';
import { MerchantAdded } from './payments/merchants/merchant-added.entity';
import { MerchantSecret } from './payments/merchants/merchant-secret.entity';
import { OutboxEvent } from './events/outbox-event.entity';
import { HandlerRetry } from './events/subscribers/handler-retry.entity';
import { ProcessedEvent } from './events/subscribers/processed-event.entity';
import { OrderStatusChange } from './order/order-status-change.entity';
import { PaymentOrder } from './order/payment-order.entity';
import { PaymentAnomaly } from './payments/anomaly/anomaly.entity';
import { CallbackDelivery } from './payments/idempotency/callback-delivery.entity';
import { PaymentCallback } from './payments/idempotency/payment-callback.entity';
import { ReconciliationBillLine } from './reconciliation/reconciliation-bill-line.entity';
import { ReconciliationItem } from './reconciliation/reconciliation-item.entity';
import { ReconciliationRun } from './reconciliation/reconciliation-run.entity';
import { RefundAnomaly } from './refund/refund-anomaly.entity';
import { Refund } from './refund/refund.entity';
import { ChannelCall } from './trade/channel-call.entity';
import { ChannelPayment } from './order/channel-payment.entity';
import { WebhookAttempt } from './events/webhooks/webhook-attempt.entity';
import { WebhookDelivery } from './events/webhooks/webhook-delivery.entity';
import { WebhookEndpoint } from './events/webhooks/webhook-endpoint.entity';
import {
  RefusedNotification,
  RefusedNotificationHour,
} from './payments/refused-notification/refused-notification.entity';

/** The tables the features map, for the app's connection and the migration CLI (ormconfig.ts). */
export const ENTITIES = [
  PaymentOrder,
  OrderStatusChange,
  ChannelPayment,
  PaymentCallback,
  CallbackDelivery,
  PaymentAnomaly,
  Refund,
  RefundAnomaly,
  ChannelCall,
  ReconciliationRun,
  ReconciliationItem,
  ReconciliationBillLine,
  AdminAudit,
  OutboxEvent,
  ProcessedEvent,
  HandlerRetry,
  WebhookEndpoint,
  WebhookDelivery,
  WebhookAttempt,
  RefusedNotification,
  RefusedNotificationHour,
  MerchantChange,
  MerchantSecret,
  MerchantAdded,
];

/** The modules whose routes the OpenAPI document describes: the ones people call. */
export const DOCUMENTED_MODULES = [OrderModule, RefundModule, TradeModule, AdminModule, ReconciliationModule];

/** The modules that export the repositories the retention tasks ask to prune. */
export const RETENTION_REPOSITORIES = [IdempotencyModule, EventsModule, SubscribersModule, RefusedNotificationModule];

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [serverConfig] }),
    LoggingModule,
    LifecycleModule,
    DatabaseModule.forRoot(ENTITIES),
    TransactionModule,
    MetricsModule,
    RabbitmqModule,
    OrderModule,
    NotifyModule,
    TradeModule,
    EventsModule,
    WebhooksModule,
    AdminModule,
    RetentionModule.forRoot(
      [
        DeliveryBytesRetention,
        PublishedEventsRetention,
        // After the outbox: a processed_event row goes only once its event can no longer be published again.
        ProcessedEventsRetention,
        RefusedNotificationsRetention,
        RefusedHoursRetention,
      ],
      RETENTION_REPOSITORIES,
    ),
    ReconciliationModule,
    HealthModule.forRoot({
      imports: [EventsModule, SpoolModule],
      providers: [EventsHealthIndicator],
      reports: [EventsHealthIndicator, SpoolHealthIndicator],
      outageCover: DeliverySpool,
    }),
  ],
})
export class AppModule {}
