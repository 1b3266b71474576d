import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { serverConfig } from './config/server.config';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { NotifyModule } from './notify/notify.module';
import { OrderModule } from './order/order.module';
import { TransactionModule } from './transaction/transaction.module';

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [serverConfig] }),
    LoggingModule,
    DatabaseModule,
    TransactionModule,
    MetricsModule,
    OrderModule,
    NotifyModule,
    HealthModule,
  ],
})
export class AppModule {}
