import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AdminModule } from './admin/admin.module';
import { serverConfig } from './platform/config/server.config';
import { DatabaseModule } from './platform/database/database.module';
import { HealthModule } from './platform/health/health.module';
import { LifecycleModule } from './platform/lifecycle/lifecycle.module';
import { LoggingModule } from './platform/logging/logging.module';
import { MetricsModule } from './platform/metrics/metrics.module';
import { NotifyModule } from './intake/notify.module';
import { OrderModule } from './order/order.module';
import { TradeModule } from './trade/trade.module';
import { TransactionModule } from './platform/transaction/transaction.module';
import { EventsModule } from './events/events.module';
import { RabbitmqModule } from './platform/rabbitmq/rabbitmq.module';
import { RetentionModule } from './platform/retention/retention.module';
import { ReconciliationModule } from './reconciliation/reconciliation.module';

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [serverConfig] }),
    LoggingModule,
    LifecycleModule,
    DatabaseModule,
    TransactionModule,
    MetricsModule,
    RabbitmqModule,
    OrderModule,
    NotifyModule,
    TradeModule,
    EventsModule,
    AdminModule,
    RetentionModule,
    ReconciliationModule,
    HealthModule,
  ],
})
export class AppModule {}
