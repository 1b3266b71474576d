import { join } from 'node:path';
import { DataSourceOptions } from 'typeorm';
import { PaymentAnomaly } from '../../anomaly/anomaly.entity';
import { DatabaseConfig } from '../config/database.config';
import { OutboxEvent } from '../../events/outbox-event.entity';
import { CallbackDelivery } from '../../settlement/idempotency/callback-delivery.entity';
import { PaymentCallback } from '../../settlement/idempotency/payment-callback.entity';
import { PaymentOrder } from '../../order/payment-order.entity';
import { OrderStatusChange } from '../../order/order-status-change.entity';
import { Refund } from '../../refund/refund.entity';
import { ChannelCall } from '../../trade/channel-call.entity';
import { ReconciliationBillLine } from '../../reconciliation/reconciliation-bill-line.entity';
import { ReconciliationItem } from '../../reconciliation/reconciliation-item.entity';
import { ReconciliationRun } from '../../reconciliation/reconciliation-run.entity';
import { AdminAudit } from '../../admin/audit/admin-audit.entity';
import { HandlerRetry } from '../../events/subscribers/handler-retry.entity';
import { ProcessedEvent } from '../../events/subscribers/processed-event.entity';

export const ENTITIES = [
  PaymentOrder,
  OrderStatusChange,
  PaymentCallback,
  CallbackDelivery,
  PaymentAnomaly,
  Refund,
  ChannelCall,
  ReconciliationRun,
  ReconciliationItem,
  ReconciliationBillLine,
  AdminAudit,
  OutboxEvent,
  ProcessedEvent,
  HandlerRetry,
];

/** The one place the TypeORM options are built: the app, the migration CLI (ormconfig.ts) and tests use it. */
export function buildDataSourceOptions(config: DatabaseConfig): DataSourceOptions {
  return {
    type: config.url.startsWith('mariadb:') ? 'mariadb' : 'mysql',
    url: config.url,
    entities: ENTITIES,
    migrations: [join(__dirname, 'migrations', '*.{ts,js}')],
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    poolSize: config.poolSize,
    // Dates travel as UTC; the app writes every timestamp itself, so the server's zone never matters.
    timezone: 'Z',
    charset: 'utf8mb4_unicode_ci',
    supportBigNumbers: true,
    bigNumberStrings: true,
    connectTimeout: config.connectTimeoutMs,
    // StatementBatch sends a new payment's writes in one round trip. Safe only because no value is
    // ever spliced into SQL text: every value travels through a `?` placeholder (see StatementBatch).
    multipleStatements: true,
    // Callers waiting for a connection beyond this fail at once (BoundedPool bounds how long each waits).
    extra: { queueLimit: config.queueLimit },
  };
}
